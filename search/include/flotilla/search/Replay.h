// Replay.h — runs a strategy against a recorded tuning space instead of real hardware.
//
// A recorded space is a brute-force table: every configuration of a restricted space with
// its measured objective, or a failure. It is read from a CSV file (one column per
// parameter, then the objective; `inf` or `nan` marks a failed configuration) or from a
// Kernel Tuner cache file (JSON, gzip-compressed or not). The table becomes a Space whose
// parameters take the values found in its columns and whose one constraint is "is a row of
// the table" (a known constraint, respected at generation), plus an objective lookup.
// Invariants: a replay is a pure function of the table and ReplayOptions (seed included);
// every proposed configuration costs one evaluation, a failed one too; nothing is proposed
// twice (the Strategy base class), so a run ends early only when the space is exhausted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flotilla/search/Space.h"
#include "flotilla/search/Strategy.h"

namespace flotilla::search {

// Messages name the file and, for CSV, the line and field:
//   "space.csv:7: field 'time': 'fast' is not a number (inf or nan marks a failed configuration)".
class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ReadOptions {
  std::string objective;  // empty: "time" when present, else the last CSV column / the cache's own
  bool maximize = false;
};

class RecordedSpace {
 public:
  struct Table;
  RecordedSpace(std::string source, std::string objective, bool maximize, Space space, std::shared_ptr<const Table> table);

  const std::string& source() const { return m_source; }
  const std::string& objective_name() const { return m_objective; }
  bool maximize() const { return m_maximize; }
  const Space& space() const { return m_space; }
  std::size_t size() const;
  std::size_t failures() const;
  // The recorded value; nullopt for a failed configuration. Throws ReplayError if not recorded.
  std::optional<double> objective(const Configuration& config) const;
  // Why a failed configuration failed, as far as the file says: Kernel Tuner's
  // CompilationFailedConfig is a build failure, RuntimeFailedConfig a crash; inf, nan and the
  // old 1e20 marker say nothing (unknown). Unknown for a configuration that did not fail.
  Failure failure(const Configuration& config) const;
  double optimum() const;
  const Configuration& optimum_config() const;
  // Every successful objective value, in no particular order (for exact baselines).
  std::vector<double> successes() const;
  // Every recorded configuration, failed ones too, in ascending order.
  std::vector<Configuration> configurations() const;

 private:
  std::string m_source;
  std::string m_objective;
  bool m_maximize;
  Space m_space;
  std::shared_ptr<const Table> m_table;
};

// `name` stands for the text's origin in messages (a file name).
RecordedSpace parse_csv_space(std::string_view text, const std::string& name, const ReadOptions& options = {});
RecordedSpace parse_kernel_tuner_cache(std::string_view text, const std::string& name, const ReadOptions& options = {});
// Reads a CSV or Kernel Tuner cache (told apart by content), gzip-compressed or not.
RecordedSpace load_recorded_space(const std::filesystem::path& path, const ReadOptions& options = {});

struct ReplayOptions {
  std::string strategy = "random";
  std::size_t budget = 100;
  std::size_t repeats = 20;
  std::uint64_t seed = 1;
  std::size_t batch = 1;
  // Passed to every repeat's strategy as StrategyOptions::warm_start (see warm_start_from).
  std::vector<Observation> warm_start;
};

// One repeat: the best objective found after each evaluation (infinite, in the losing
// direction, until something succeeds).
struct ReplayRun {
  std::uint64_t seed = 0;
  std::vector<double> best;
  bool exhausted = false;  // the space ran out before the budget
  std::size_t failures = 0;        // evaluations of configurations that failed
  std::size_t asks = 0;            // strategy->ask calls
  double ask_cpu_seconds = 0;      // CPU time in ask and tell (this thread), for the cost per ask
  double ask_cpu_max_seconds = 0;  // the costliest ask with the tells of its batch
};

struct ReplayResult {
  ReplayOptions options;
  double optimum = 0;
  bool maximize = false;
  std::vector<ReplayRun> runs;

  // best-found / optimum (optimum / best-found when maximising) after `evaluations`; >= 1.
  double ratio(const ReplayRun& run, std::size_t evaluations) const;
  // Evaluations until within `tolerance` (0.05 = 5%) of the optimum; nullopt if never.
  std::optional<std::size_t> evaluations_to(const ReplayRun& run, double tolerance) const;
  // Evaluations until the run's final best was first found; nullopt if it found nothing valid.
  std::optional<std::size_t> evaluations_to_best(const ReplayRun& run) const;
};

// Runs options.repeats independent repeats (seed of repeat r derived from options.seed and r).
ReplayResult replay(const RecordedSpace& recorded, const ReplayOptions& options);

// Order statistics of best-found / optimum over the repeats that found a valid configuration
// within `evaluations` (`with_valid` of them); `without_valid` counts the others, which have no
// ratio. With no valid repeat at all the statistics are NaN (JSON leaves them out: no nulls).
struct ReplayStats {
  double median = 0, p25 = 0, p75 = 0, mean = 0;
  double p90 = 0;                      // the worst decile's edge: what an unlucky single campaign meets
  std::size_t with_valid = 0;          // repeats the statistics are over
  std::size_t without_valid = 0;       // repeats that found no valid configuration
};
ReplayStats ratio_stats(const ReplayResult& result, std::size_t evaluations);
// Median evaluations to within the tolerance over repeats, a repeat that never got there
// counting as infinitely many; nullopt when fewer than half got there. `reached` counts them.
std::optional<double> median_evaluations_to(const ReplayResult& result, double tolerance, std::size_t* reached = nullptr);

// A warm start read from another recorded space of the same kernel (another GPU, compiler or
// problem size): its configurations in this space's terms and loss convention.
struct WarmStartMatch {
  // This space's parameter -> the other file's parameter, for names that differ beyond case.
  std::vector<std::pair<std::string, std::string>> map;
  // Parameters on one side only, each pinned to a value: one of the other file's (only its rows
  // with that value are read), or one of this space's (the other file's rows are read as having
  // that value).
  std::vector<std::pair<std::string, std::string>> fix;
};
struct WarmStartData {
  std::string source;
  std::size_t rows = 0;       // configurations in the other file
  std::size_t left_out = 0;   // rows whose pinned parameters (fix) have another value
  std::size_t ignored = 0;    // a value not on this space's grid, or not a configuration here
  std::vector<Observation> observations;  // the rest, failed ones included, in ascending order
};
// Each parameter of `recorded` is read from the other file's parameter of the same name, or the
// one equal but for case, or the one `match.map` names, or is pinned by `match.fix`; every other parameter of the other file
// must be pinned by `match.fix`. Values are matched as text (8 is 8, "float" is "float").
// Throws ReplayError naming the file and the parameter when they cannot be matched:
//   "warm start W7800.csv: no parameter for 'PADDING' of RTX.csv (its parameters: ...; --warm-start-map
//   PADDING=NAME names it, --warm-start-fix PADDING=VALUE gives it one value)".
WarmStartData warm_start_from(const RecordedSpace& recorded, const RecordedSpace& other, const WarmStartMatch& match = {});

// The reports; with a warm start, `warm` (its data and the same replay run with it) adds the
// warm statistics beside the cold ones.
struct WarmStartReport {
  const WarmStartData& data;
  const ReplayResult& result;
};
std::string replay_text(const RecordedSpace& recorded, const ReplayResult& result, const WarmStartReport* warm = nullptr);
std::string replay_json(const RecordedSpace& recorded, const ReplayResult& result, const WarmStartReport* warm = nullptr);

}  // namespace flotilla::search
