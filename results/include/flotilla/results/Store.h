// Store.h — the campaign's HDF5 file: one file per campaign, one writer, append-only.
//
// Invariants:
//  - Every record is appended and flushed (H5Dflush) before the call returns, so a crash loses
//    at most the record being written; the file is written in SWMR mode so readers (flotilla
//    results, h5py) can open it while the campaign runs. Inside a Store::Group the flush point
//    moves to the end of the group (see Group below): a crash loses at most that group.
//  - A trial is identified by (candidate, kind, index, attempt); appending one that already exists
//    adds nothing and returns false (idempotent ingest, safe resume).
//  - Candidate ids are dense: the n-th candidate appended has id n.
//  - No HDF5 type or handle appears in this header.
// Schema (docs/results-schema.md): root attributes flotilla_schema, flotilla_version; group
// /campaign with its attributes; compound datasets /candidates, /trials, /metrics, /events,
// /estimates, /confirmations; the bytes of long configurations in /candidate_text; the group
// /tests with per-test outcomes (TestTables.h). Files of schema 1 are read (they have no
// estimates, confirmations or long configurations); only files of this schema are appended to.
#pragma once

#include <flotilla/results/TestOutcomes.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flotilla::results {

inline constexpr int kSchemaVersion = 2;
inline constexpr int kOldestReadableSchema = 1;

// explore: a benchmark repeat; evaluate: a test shard (or a suite's verdict / re-run);
// confirm: one interleaved pair of a confirmation (docs/verdicts.md); warmup: a discarded run;
// build: the candidate's build (build.command, docs/build.md), index 0, before any explore run.
// build_failed is the status of a build that did not succeed (exit code, signal or timeout).
enum class TrialKind : std::int8_t { explore = 0, evaluate = 1, confirm = 2, warmup = 3, build = 4 };
enum class TrialStatus : std::int8_t { ok = 0, failed = 1, timeout = 2, cancelled = 3, build_failed = 4 };

std::string_view to_string(TrialKind kind);
std::string_view to_string(TrialStatus status);

struct CampaignInfo {
  std::string name;
  std::string config_text;   // the whole campaign file as given, for reproduction
  std::string fingerprint;   // canonical text of the settings that recorded results depend on
  std::string objective;
  std::string direction;     // "maximize" or "minimize"
  std::int32_t repeats = 1;  // explore repeats per candidate
  std::int32_t shards = 0;   // evaluate shards per candidate; 0: no evaluate stage
  std::string test_gate;     // "all_pass" or "no_regression" when shards report per-test outcomes
                             // and a gate verdict decides (docs/tests.md); empty: the shards' exit codes
  std::uint64_t seed = 0;
  std::string flotilla_version;
  std::string host;
  double created = 0;        // seconds since the epoch
  // Confirmation of speed-ups (docs/verdicts.md); confirm_max_pairs 0: confirmation off.
  double confirm_confidence = 0.95;
  double confirm_min_effect = 0.02;
  std::int32_t confirm_max_pairs = 0;
  std::int32_t schema = kSchemaVersion;  // the file's schema version (read back; written as kSchemaVersion)
  // Several objectives (intent.objectives, docs/objectives.md): "time_s:min,residual:min", the
  // first being `objective`; empty: one objective. `pick` is the rule that picks the winner from
  // the verified Pareto front: "knee", "weighted W1,W2,..." or "lexicographic".
  std::string objectives;
  std::string pick;
  // search.fidelity (docs/search.md#fidelity): "PARAM=VALUE", the parameter whose declared values
  // are ever more faithful evaluations and its last, full value; empty: none. A candidate at any
  // other value is screened: its objective ranks it among its own fidelity only.
  std::string fidelity;
};

struct CandidateRecord {
  std::int64_t id = 0;
  std::int32_t round = 0;
  std::string config;        // canonical "name=value name=value" text, of any length
  std::string origin;        // "baseline", "grid", "random", ...; at most 31 bytes
};

struct Metric {
  std::string name;          // at most 63 bytes
  double value = 0;
};

struct TrialRecord {
  std::int64_t candidate = 0;
  TrialKind kind = TrialKind::explore;
  std::int32_t index = 0;    // repeat number (explore) or shard number (evaluate)
  std::int32_t attempt = 0;
  TrialStatus status = TrialStatus::ok;
  double start = 0;          // seconds since the epoch
  double end = 0;
  std::int32_t exit_code = 0;
  double objective = 0;      // NaN when the trial produced none
  std::string reason;        // why it failed; empty when ok; truncated to 255 bytes
  std::string output_tail;   // last bytes of stdout+stderr; truncated to the last 1023 bytes
  std::vector<Metric> metrics;
  std::int32_t rank = 0;     // where it ran: MPI rank (0 for the local backend),
  std::string host;          //   host, at most 63 bytes,
  std::string device;        //   "cpu" or the CUDA_VISIBLE_DEVICES it saw, at most 63 bytes
  std::string cores;         //   the CPUs it was pinned to ("0", "2-3"); empty: not pinned
  std::string slurm_job;     //   the Slurm job it ran in ("812", "813_4"), at most 31 bytes; empty: none

  bool same_key(const TrialRecord& other) const {
    return candidate == other.candidate && kind == other.kind && index == other.index &&
           attempt == other.attempt;
  }
};

// A candidate's objective as an estimate: the median of its explore repeats and the
// order-statistic interval (Stats.h), written when its exploration is final.
struct EstimateRecord {
  std::int64_t candidate = 0;
  std::int32_t repeats = 0;
  double estimate = 0;
  double low = 0;
  double high = 0;
  double coverage = 0;       // the interval's actual coverage (0..1)
  double time = 0;
};

// The performance half of verification: a candidate measured against its reference in
// interleaved pairs (docs/verdicts.md). `verdict` is a stats::verdict_key ("faster", ...).
struct ConfirmationRecord {
  std::int64_t candidate = 0;
  std::int64_t reference = 0;
  std::string verdict;
  std::int32_t pairs = 0;
  std::int32_t looks = 0;
  double ratio = 1;          // speed-up over the reference (> 1: better), Hodges-Lehmann
  double low = 1;            // its interval, simultaneous over the looks at `confidence`
  double high = 1;
  double confidence = 0.95;
  double min_effect = 0.02;
  double time = 0;
  std::string reason;        // why it failed, when verdict is "failed"; at most 255 bytes
};

// A code change a proposer wrote (docs/propose.md), or a proposer's run: the proposal journal.
// An accepted proposal becomes the candidate whose origin is "proposal ID"; a refused one says
// why; an `answered` row records that proposer `proposer` finished its run for `round` (a resumed
// campaign never asks that round of it again).
enum class ProposalStatus : std::int8_t { accepted, refused, answered };
std::string_view to_string(ProposalStatus status);

struct ProposalRecord {
  std::int64_t id = 0;       // its row; set by the store
  std::int32_t round = 0;
  std::int32_t proposer = 0;  // the proposer's index in the fleet (propose.parallel)
  std::int64_t parent = -1;   // the candidate whose tree the patch applies to; -1: none
  std::uint64_t hash = 0;     // content hash (the duplicate key)
  ProposalStatus status = ProposalStatus::refused;
  std::string name;           // NAME of NAME.patch; at most 63 bytes
  std::string reason;         // why it was refused (answered: what the run gave); at most 1023 bytes
  std::string patch;          // the unified diff, whole
  std::string rationale;      // from NAME.json, whole
  double time = 0;
};

struct EventRecord {
  double time = 0;
  std::string kind;          // at most 31 bytes, e.g. "campaign_started", "rolled_back"
  std::string detail;        // free text or JSON, truncated to 1023 bytes
};

// Bad files (missing, not HDF5, not a flotilla campaign, unsupported schema version, corrupt)
// raise StoreError whose what() names the file and the problem, e.g.
//   "results.h5: not a flotilla campaign file (no 'flotilla_schema' attribute on /)".
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The file system is nearly full: flotilla stopped before a write that could fail half-way.
// Nothing was written and the Store stays usable (add_last_event still fits).
class StoreSpaceError : public StoreError {
 public:
  using StoreError::StoreError;
};

class Store {
 public:
  // Creates a new file (refuses to overwrite an existing one) and opens it for SWMR writing.
  static Store create(const std::filesystem::path& path, const CampaignInfo& info);
  // Opens an existing campaign file for appending (SWMR write). Works on a file whose writer
  // was killed (SIGKILL) without closing it.
  static Store open_for_append(const std::filesystem::path& path);
  // Opens read-only; works while another process writes the file in SWMR mode.
  static Store open_read(const std::filesystem::path& path);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const;
  const CampaignInfo& campaign() const;
  // What open_for_append repaired: rows a failed write (a full disk) left unwritten, cut from
  // their table, one sentence each ("/trials: 3 rows a failed write left unwritten, cut").
  const std::vector<std::string>& repairs() const;

  std::vector<CandidateRecord> candidates() const;
  // Which fields trials() reads. outcomes: what a campaign's summary reads (results::summarize),
  // for `results summary` at scale (issue 35): every field but host, device, cores and
  // slurm_job, which are left empty, and reason and output_tail only of the trials that did not
  // end ok and of confirmations (the others' are left empty too).
  enum class TrialFields { all, outcomes };
  // In append order, metrics filled in.
  std::vector<TrialRecord> trials(TrialFields fields = TrialFields::all) const;
  std::vector<EventRecord> events() const;

  // Appends candidate `record` whose id must equal the current candidate count.
  void add_candidate(const CandidateRecord& record);
  // Appends a trial and its metrics; returns false (and writes nothing) if a trial with the same
  // key is already recorded.
  bool add_trial(const TrialRecord& record);
  void add_event(const EventRecord& record);
  // Appends to /proposals (a file written before proposals had none gains it when reopened for
  // appending); returns the record's id (its row). Grouped like the other records.
  std::int64_t add_proposal(const ProposalRecord& record);
  std::vector<ProposalRecord> proposals() const;
  // One event written into the space flotilla keeps in reserve (FLOTILLA_STORE_RESERVE_BYTES):
  // the last word of a run that a nearly full disk stopped (StoreSpaceError). Not in a Group.
  void add_last_event(const EventRecord& record);
  // Estimates and confirmations (schema 2; a schema 1 file reads as having none).
  void add_estimate(const EstimateRecord& record);
  void add_confirmation(const ConfirmationRecord& record);
  std::vector<EstimateRecord> estimates() const;
  std::vector<ConfirmationRecord> confirmations() const;

  // Defers the writes of the candidates, trials and events added while it lives: they are held
  // in memory and written together, one append and one H5Dflush per table, in the order
  // candidates, metrics, trials, events, when the outermost Group commits (commit(), or its
  // destructor). So 1,000 records cost 4 flushes instead of 1,000 to 2,000. A writer killed
  // inside a group loses the group's records, nothing recorded before it, and the file stays
  // readable and repairable as after any crash. Use it only for records that a crash can afford
  // to lose: ones a resumed campaign rebuilds (candidates not yet handed to a backend) or
  // reads again (trials still held in a job's results file), or ones it has not yet acted on.
  // Reading candidates, trials or events, or adding test outcomes, commits the group first.
  // Groups nest; only the outermost one writes.
  class Group {
   public:
    explicit Group(Store& store);
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    // Commits if commit() was not called. Never throws: if that write fails, the Store refuses
    // every later write with "an earlier write failed", so the failure is not lost.
    ~Group();
    // Writes and flushes the group's records now (the outermost group only); throws StoreError.
    void commit();

   private:
    Store* m_store;
    bool m_open = true;
  };

  // Per-test outcomes of evaluate stages (TestOutcomes.h, docs/tests.md). A file written before
  // they existed reads as having none; reopening it for appending adds the empty /tests group.
  // Returns the id of the suite; an identical suite already recorded is reused, not rewritten.
  std::int64_t add_test_suite(const TestSuite& suite);
  // Returns false (and writes nothing) if the candidate's outcomes are already recorded.
  bool add_test_results(const CandidateTests& tests);
  std::vector<std::int64_t> tested_candidates() const;   // in the order they were recorded
  std::optional<CandidateTests> test_results(std::int64_t candidate) const;
  // Only the outcome bytes: all that a diff or a gate needs, without durations and messages.
  std::optional<std::vector<std::uint8_t>> test_outcomes(std::int64_t candidate) const;
  TestSuite test_suite(std::int64_t id) const;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

// True when a flotilla process is writing `path` now (it holds the writer lock): a reader can
// tell a running campaign from one that stopped without finishing.
bool has_live_writer(const std::filesystem::path& path);

}  // namespace flotilla::results
