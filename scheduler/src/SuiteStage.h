// SuiteStage.h — the evaluate stage of a campaign whose shards report per-test outcomes
// (evaluate.suite = gtest, ctest, lit, pytest, files, per_file, junit or tap; docs/tests.md).
//
// Per evaluated candidate:
//  1. its shard tasks run through the backend like any evaluate shard; each writes a report to
//     RESULTS.tests/candidate-N/shard-K.aATTEMPT.EXT (gtest: GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX and
//     --gtest_output; ctest: -I with the shard's test numbers and --output-junit; lit, pytest: the
//     report's option and the selectors of the shard's tests (suites::Selection); files: {files}
//     names a list of this shard's files; per_file: the shard is one flotilla-per-file task that
//     runs the command once per file of that list; junit/tap: {report});
//  2. a shard's trial is ok when its report is readable — failing tests are the gate's business,
//     not the shard's — and failed, naming the report, when it is missing or malformed;
//  3. once every shard is in: discovery (gtest: `COMMAND --gtest_list_tests`; ctest, lit, pytest:
//     the protocol's arguments, before the shards, which it divides; run once per candidate on the
//     scheduler's host in campaign.workdir, where the shards run, and kept as discovery.txt),
//     assembly of the reports, one re-run of the failures (gtest, ctest, lit, pytest with
//     evaluate.rerun_failures; a task at evaluate index
//     shards + 1), the outcomes recorded in /tests, and the gate's verdict recorded as the
//     evaluate trial at index `shards`, which the analysis requires (CampaignInfo::test_gate).
// Reports stay on disk, so a resumed campaign re-reads them instead of running a shard again.
// Invariants: each attempt of a shard writes a report of its own (shard-K.aN.EXT), so a task
// made again never removes a report that an earlier job will still hand back, and one attempt's
// report is never taken for another's; the verdict is computed from recorded bytes only
// (results::decide_gate), so `flotilla results tests` reaches the same verdict.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "flotilla/jobs/Task.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Settings.h"
#include "flotilla/suites/Assemble.h"
#include "flotilla/suites/Protocols.h"

namespace flotilla::scheduler {

class SuiteStage {
 public:
  using Values = std::map<std::string, std::string, std::less<>>;
  // One candidate's recorded trials (the ledger's index, Ledger::trials_of): what is asked about
  // a candidate reads its own trials, never every trial of the campaign.
  using CandidateTrials = std::vector<const results::TrialRecord*>;

  // `path_prepend`: where discovery looks for the command first, as the backends do for tasks.
  // `list_values`: the values [evaluate] list is rendered with for a candidate (its parameters).
  SuiteStage(const Settings& settings, std::vector<std::filesystem::path> path_prepend,
             std::function<Values(std::int64_t)> list_values = {})
      : m_s(settings), m_path_prepend(std::move(path_prepend)), m_list_values(std::move(list_values)) {}

  bool active() const { return protocol().has_tests(); }
  // Where recorded durations come from for balancing shards: the reference candidate's (the
  // baseline's) recorded outcomes, else the last recorded candidate's.
  void set_reference(const results::Store* store, std::optional<std::int64_t> reference) {
    m_store = store;
    m_reference = reference;
  }
  // Evaluate index of the gate's verdict, and of the re-run of failures.
  int verdict_index() const { return m_s.shards; }
  int rerun_index() const { return m_s.shards + 1; }

  // Checks what can be checked before anything runs (a files glob that matches nothing).
  void prepare();

  // Before rendering a shard's command: {report} and {files}. Writes the shard's list of files
  // (files) or its ctest selection (after the discovery, which divides the shards).
  void add_shard_values(Values& values, std::int64_t candidate, int shard, int attempt);
  // After rendering: what gtest and ctest need beyond the user's command.
  void finish_shard_task(jobs::TaskSpec& spec, std::int64_t candidate, int shard, int attempt) const;

  // Every task that comes back, however it ended (cancelled too): a per_file shard's temporary
  // folders are removed, since a killed flotilla-per-file could not remove them itself.
  void task_ended(std::uint64_t task_id, int attempt) const;
  // At the start of a run whose earlier tasks cannot still be running (they died with the
  // scheduler that started them: local and mpi backends), the temporary folders of a
  // flotilla-per-file that was killed with it, which nothing else removes.
  void remove_stale_temporaries() const;

  // A shard's (or the re-run's) trial as the gate sees it (see 2. above); other trials unchanged.
  void judge(results::TrialRecord& trial);

  // Whether the candidate has every shard recorded and ok, and no verdict yet.
  bool awaits_verdict(std::int64_t candidate, const CandidateTrials& trials) const;

  // The re-run of the candidate's failures, when its kind and the settings ask for one and it has
  // not run yet; `argv` is the candidate's rendered evaluate command (shard 0).
  std::optional<jobs::TaskSpec> rerun_task(std::int64_t candidate, std::vector<std::string> argv,
                                           const CandidateTrials& trials, int attempt = 0);

  // Assembles, records the outcomes and returns the verdict trial (not yet recorded).
  // `baseline`: the baseline candidate's id, when the campaign has one.
  results::TrialRecord verdict(results::Store& store, std::int64_t candidate, std::vector<std::string> argv,
                               const CandidateTrials& trials, std::optional<std::int64_t> baseline);

 private:
  std::filesystem::path candidate_dir(std::int64_t candidate) const;
  std::filesystem::path report_path(std::int64_t candidate, int index, int attempt) const;
  const suites::ReportFormat& report_format() const;
  bool file_suite() const;
  std::filesystem::path temporary_dir(std::int64_t candidate, int shard, int attempt) const;  // files or per_file: the shards get lists of files
  void wrap_per_file_task(jobs::TaskSpec& spec, std::int64_t candidate, int shard, int attempt) const;
  std::vector<std::string> test_files();
  std::vector<std::string> candidate_files(std::int64_t candidate);
  suites::Parsed<std::vector<std::vector<std::string>>> shard_files(std::int64_t candidate, int shard);
  void record_shard_sizes(std::int64_t candidate, const std::vector<std::int32_t>& assignment);
  std::optional<results::CandidateTests> reference_record(std::int64_t candidate) const;
  std::vector<double> reference_seconds(std::int64_t candidate, const std::vector<std::string>& names, bool by_file) const;
  bool flotilla_selects() const;
  suites::Parsed<std::vector<std::int32_t>> selected_assignment(std::int64_t candidate,
                                                                const std::vector<std::string>& names);
  suites::Parsed<std::vector<std::int32_t>> file_assignment(std::int64_t candidate, const std::vector<std::string>& files);
  suites::Parsed<std::vector<std::int32_t>> read_assignment(const std::filesystem::path& path, std::size_t tests) const;
  std::vector<std::int32_t> write_assignment(const std::filesystem::path& path, std::vector<std::int32_t> assignment) const;
  suites::Parsed<std::vector<std::string>> test_selectors(std::int64_t candidate, const std::vector<std::string>& names) const;
  void add_selection(std::vector<std::string>& argv, const std::vector<std::string_view>& arguments,
                     const std::filesystem::path& report, const std::filesystem::path& file) const;
  const suites::SuiteProtocol& protocol() const;
  // Reports, listings and the selections made from them can be unusable: a ReportProblem naming
  // the file, which becomes a shard's reason or a failed verdict (never an exception).
  suites::Parsed<std::optional<std::vector<std::string>>> discovery(std::int64_t candidate,
                                                                    const std::vector<std::string>& argv);
  suites::Parsed<suites::Assembled> assemble(std::int64_t candidate, const std::vector<std::string>& argv,
                                             const CandidateTrials& trials);
  suites::Parsed<std::vector<suites::TestResult>> report(
      std::int64_t candidate, int index, int attempt,
      const std::optional<std::vector<std::string>>& discovered = std::nullopt) const;
  void add_unmatched_names(results::GateNames& names, const results::TestSuite& suite, std::int64_t candidate);
  results::GateNames gate_names(const results::Store& store, const results::CandidateTests& mine,
                                const std::optional<results::CandidateTests>& reference,
                                const results::TestDiff& diff, const std::map<std::int64_t, std::string>& fallen) const;
  std::map<std::int64_t, std::string> number_regressions(const results::Store& store, const results::CandidateTests& mine,
                                                         const std::optional<results::CandidateTests>& reference,
                                                         results::TestDiff& diff) const;

  const Settings& m_s;
  std::vector<std::filesystem::path> m_path_prepend;
  std::function<Values(std::int64_t)> m_list_values;
  std::optional<std::vector<std::string>> m_files;                                   // the glob, once
  std::map<std::int64_t, std::vector<std::string>> m_discovered;        // until the candidate's verdict
  std::map<std::pair<std::int64_t, int>, std::int64_t> m_shard_sizes;  // ctest, lit, pytest, per_file: tests per (candidate, shard)
  const results::Store* m_store = nullptr;
  std::optional<std::int64_t> m_reference;
  std::map<std::int64_t, std::string> m_discovery_error;  // ctest, lit, pytest: candidates whose discovery failed
  std::set<std::int64_t> m_fresh_files;  // file suites: candidates whose files.txt this run wrote
};

}  // namespace flotilla::scheduler
