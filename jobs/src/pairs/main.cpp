// flotilla-pairs — the performance half of verification, run as one task (docs/verdicts.md).
//
// Runs a candidate's benchmark command and its reference's back to back, pair after pair, in
// the order given (A: candidate first, B: reference first), in this one process's slot: on the
// local backend that slot is pinned and exclusive, under mpi or Slurm it is one rank of one job
// on one node. After each pair it applies the sequential rule (results/Stats.h) and stops as
// soon as a look decides, so a clear case costs few pairs. Every pair is printed as metrics;
// the scheduler records one trial per pair and recomputes the verdict from them.
//
//   flotilla-pairs --objective NAME --direction maximize|minimize --order ABBA... --timeout MS
//                  [--warmup N] --confidence C --min-effect E --max-pairs N
//                  --candidate N ARG... --reference N ARG...
//
// Output: per pair `flotilla-metric: pair.I.candidate=V pair.I.reference=V pair.I.order=0|1
// pair.I.begin_s=S pair.I.end_s=S` (when the pair's first run started and its second ended, in
// seconds since this process started: the scheduler gives each pair's trial its own times),
// then `flotilla-pairs: VERDICT: RATIO [LOW, HIGH] after N pairs`. A run that fails ends the
// task with exit code 3 after `flotilla-pairs: pair I: candidate run failed: REASON` and that
// run's last output lines; the pairs before it are still printed.
//
// Isolation: each run gets a fresh, empty TMPDIR of its own, removed after it, so that a
// command cannot hand a cached answer from one run to the next through it (a candidate that
// cached its result in the temporary folder was confirmed 2.99x). What a command keeps anywhere
// else (a fixed path, the working folder) is its own business: docs/verdicts.md says what a
// benchmark must not do. Pairs whose ratio depends on the order or drifts are `unreliable`.
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "flotilla/jobs/Backend.h"
#include "flotilla/results/Stats.h"

namespace {

namespace fj = flotilla::jobs;
namespace stats = flotilla::results::stats;

constexpr int kUsageError = 2;
constexpr int kRunFailed = 3;

struct Options {
  std::string objective;
  bool maximize = true;
  std::string order;
  std::chrono::milliseconds timeout{0};
  int warmup = 0;
  stats::ConfirmSettings settings;
  std::vector<std::string> candidate, reference;
};

[[noreturn]] void usage(const std::string& why) {
  fmt::print(stderr,
             "flotilla-pairs: {}\nusage: flotilla-pairs --objective NAME --direction maximize|minimize --order ABBA... "
             "--timeout MS [--warmup N] --confidence C --min-effect E --max-pairs N --candidate N ARG... "
             "--reference N ARG...\n",
             why);
  std::exit(kUsageError);
}

double number(std::string_view flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v)) usage(fmt::format("{}: '{}' is not a number", flag, text));
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  bool have_candidate = false, have_reference = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", flag));
    const char* value = argv[++i];
    if (flag == "--objective") o.objective = value;
    else if (flag == "--direction") o.maximize = std::string_view(value) != "minimize";
    else if (flag == "--order") o.order = value;
    else if (flag == "--timeout") o.timeout = std::chrono::milliseconds(static_cast<long long>(number(flag, value)));
    else if (flag == "--warmup") o.warmup = static_cast<int>(number(flag, value));
    else if (flag == "--confidence") o.settings.confidence = number(flag, value);
    else if (flag == "--min-effect") o.settings.min_effect = number(flag, value);
    else if (flag == "--max-pairs") o.settings.max_pairs = static_cast<int>(number(flag, value));
    else if (flag == "--candidate" || flag == "--reference") {
      const int n = static_cast<int>(number(flag, value));
      if (n < 1 || i + n > argc - 1) usage(fmt::format("{} {}: not that many arguments", flag, n));
      auto& target = flag == "--candidate" ? o.candidate : o.reference;
      for (int k = 0; k < n; ++k) target.emplace_back(argv[++i]);
      (flag == "--candidate" ? have_candidate : have_reference) = true;
    } else {
      usage(fmt::format("unknown option '{}'", flag));
    }
  }
  if (o.objective.empty() || !have_candidate || !have_reference) usage("--objective, --candidate and --reference are required");
  if (static_cast<int>(o.order.size()) < o.settings.max_pairs)
    usage(fmt::format("--order has {} letters for {} pairs", o.order.size(), o.settings.max_pairs));
  if (o.order.find_first_not_of("AB") != std::string::npos) usage("--order takes only the letters A and B");
  if (stats::look_schedule(o.settings.max_pairs, o.settings.confidence).empty())
    usage(fmt::format("--max-pairs {} is too few for confidence {}", o.settings.max_pairs, o.settings.confidence));
  return o;
}

// One run of one command in this process's slot; the failure reason, or its objective.
struct Run {
  std::optional<double> value;
  std::string failure;
  std::string tail;
};

// A fresh private folder for one run's TMPDIR (mode 0700, removed by the destructor).
class RunTmpdir {
 public:
  RunTmpdir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/flotilla-pairs-run.XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) m_path = pattern;
  }
  ~RunTmpdir() {
    std::error_code ignored;
    if (!m_path.empty()) std::filesystem::remove_all(m_path, ignored);
  }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

Run run_once(fj::Backend& backend, const std::vector<std::string>& argv, const Options& o) {
  RunTmpdir tmpdir;
  fj::TaskSpec spec{.argv = argv, .timeout = o.timeout, .objective = o.objective};
  if (!tmpdir.path().empty()) spec.env = {{"TMPDIR", tmpdir.path()}};
  backend.submit({std::move(spec)});
  std::vector<fj::TaskResult> done;
  while (done.empty()) done = backend.collect(std::chrono::seconds(1));
  const auto& r = done.front();
  Run run{.tail = r.output_tail};
  if (r.status != fj::TaskStatus::ok) run.failure = r.reason;
  else if (!r.objective || !(*r.objective > 0))
    run.failure = fmt::format("objective '{}' is {}, not a positive number: a speed ratio needs one", o.objective,
                              r.objective ? fmt::format("{}", *r.objective) : "missing");
  else run.value = r.objective;
  return run;
}

[[noreturn]] void fail(int pair, std::string_view which, const Run& run) {
  fmt::print("flotilla-pairs: pair {}: {} run failed: {}\n", pair, which, run.failure);
  std::istringstream lines(run.tail);
  std::vector<std::string> kept;
  for (std::string line; std::getline(lines, line);) kept.push_back(line);
  for (std::size_t i = kept.size() > 5 ? kept.size() - 5 : 0; i < kept.size(); ++i) fmt::print("  | {}\n", kept[i]);
  std::fflush(stdout);
  std::exit(kRunFailed);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const auto started = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  // One slot, not pinned again: this process already runs where its slot or rank put it, and
  // the commands it starts inherit that.
  auto backend = fj::make_backend({.name = "local", .slots = 1, .pin = false});
  for (int w = 0; w < o.warmup; ++w) {
    if (auto run = run_once(*backend, o.candidate, o); !run.value) fail(-1, "warm-up candidate", run);
    if (auto run = run_once(*backend, o.reference, o); !run.value) fail(-1, "warm-up reference", run);
  }
  std::vector<double> log_ratios;
  std::vector<stats::PairRun> runs;
  stats::Confirmation c;
  for (int pair = 0; pair < o.settings.max_pairs; ++pair) {
    const bool candidate_first_now = o.order[static_cast<std::size_t>(pair)] == 'A';
    Run candidate, reference;
    const double begin = seconds();
    if (candidate_first_now) {
      if (candidate = run_once(*backend, o.candidate, o); !candidate.value) fail(pair, "candidate", candidate);
      if (reference = run_once(*backend, o.reference, o); !reference.value) fail(pair, "reference", reference);
    } else {
      if (reference = run_once(*backend, o.reference, o); !reference.value) fail(pair, "reference", reference);
      if (candidate = run_once(*backend, o.candidate, o); !candidate.value) fail(pair, "candidate", candidate);
    }
    fmt::print(
        "flotilla-metric: pair.{0}.candidate={1:.17g} pair.{0}.reference={2:.17g} pair.{0}.order={3} "
        "pair.{0}.begin_s={4:.6f} pair.{0}.end_s={5:.6f}\n",
        pair, *candidate.value, *reference.value, candidate_first_now ? 0 : 1, begin, seconds());
    std::fflush(stdout);
    const double ratio = o.maximize ? *candidate.value / *reference.value : *reference.value / *candidate.value;
    log_ratios.push_back(std::log(ratio));
    runs.push_back({.candidate_first = candidate_first_now,
                    .log_candidate = std::log(*candidate.value),
                    .log_reference = std::log(*reference.value)});
    c = stats::decide_confirmation(log_ratios, o.settings, runs);
    if (c.verdict != stats::Verdict::pending) break;
  }
  fmt::print("flotilla-pairs: {}: {:.4g}x [{:.4g}, {:.4g}] after {} pairs\n", stats::to_string(c.verdict), c.ratio,
             c.low, c.high, log_ratios.size());
  return 0;
}
