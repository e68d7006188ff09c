// fuzz_slurm — what flotilla reads from Slurm's commands (jobs/include/flotilla/jobs/Slurm.h,
// jobs/src/SlurmParse.cpp): squeue --json output, array task expressions ("0-9,12:3%2"),
// sbatch --parsable output and job state names. The first byte picks the parser: 'q' squeue,
// 'a' array expression, 's' sbatch, 'n' state name (any other byte: itself modulo 4).
// Normal results: values, or std::invalid_argument from parse_squeue_json (Slurm.h).
// Invariant: an array expression counts at least one element.
#include <stdexcept>

#include "FuzzUtil.h"
#include "flotilla/jobs/Slurm.h"

using namespace flotilla;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  static constexpr char kinds[] = {'q', 'a', 's', 'n'};
  char kind = static_cast<char>(data[0]);
  if (std::string_view(kinds, 4).find(kind) == std::string_view::npos) kind = kinds[data[0] % 4];
  switch (kind) {
    case 'q':
      try {
        for (const auto& job : jobs::parse_squeue_json(text))
          FUZZ_CHECK(job.submit_count >= 1, "a job record that stands for no job");
      } catch (const std::invalid_argument&) {
      }
      break;
    case 'a': FUZZ_CHECK(jobs::array_expression_size(text) >= 1, "an array expression of no element"); break;
    case 's': (void)jobs::parse_sbatch_parsable(text); break;
    default: (void)jobs::to_string(jobs::job_state_from_name(text)); break;
  }
  return 0;
}
