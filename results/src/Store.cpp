// Store.cpp — the campaign store: tables opened once, rows appended and flushed one record at
// a time (or one group at a time, Store::Group), read back whole.
//
// Invariants (beyond Store.h's):
//  - add_trial writes the trial's metrics first and the trial row last: the trial row commits
//    the record. Metrics whose trial index is not (yet) a row of /trials are ignored by readers
//    and cut off by open_for_append, so a writer killed between the two leaves no trace.
//  - Only the writer caches counts and the trial-key set; it is the file's only writer
//    (WriterLock), so the cache cannot go stale.
//  - After a write fails half-way the Store refuses further writes: reopening is what repairs.
//  - A group's rows wait in m_pending with their final row numbers already counted (candidate
//    ids, trial indices of metrics, the trial-key set), so committing appends them unchanged.
//    The commit keeps add_trial's order across the whole group: every metric row is flushed
//    before the trial rows that commit them, and events (which may state decisions drawn from
//    those trials) come last.
#include "CampaignFile.h"
#include "Hdf5.h"
#include "Schema.h"
#include "TestTables.h"
#include "WriterLock.h"

#include <flotilla/results/Store.h>

#include <algorithm>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdlib>
#include <set>
#include <tuple>

namespace flotilla::results {

namespace {

using TrialKey = std::tuple<std::int64_t, std::int8_t, std::int32_t, std::int32_t>;

// Free space below which no record is written (require_space): a few chunks of every table.
// FLOTILLA_STORE_RESERVE_BYTES overrides it (0: none), so tests can make a write really fail.
constexpr unsigned long long kReserveBytes = 1ULL << 20;
unsigned long long reserve_bytes() {
  static const unsigned long long bytes = [] {
    const char* text = std::getenv("FLOTILLA_STORE_RESERVE_BYTES");
    return text ? std::strtoull(text, nullptr, 10) : kReserveBytes;
  }();
  return bytes;
}

TrialKey key_of(std::int64_t candidate, TrialKind kind, std::int32_t index, std::int32_t attempt) {
  return {candidate, static_cast<std::int8_t>(kind), index, attempt};
}

using h5::with_path;

}  // namespace

struct Store::Impl {
  enum class Mode { read, swmr_read, write };

  std::filesystem::path m_path;
  Mode m_mode = Mode::read;
  WriterLock m_lock;   // declared before the handles: released only after the file is closed
  h5::Handle m_file;
  schema::MemoryTypes m_types;
  h5::Handle m_candidates, m_trials, m_metrics, m_events;
  h5::Handle m_estimates, m_confirmations, m_candidate_text;  // schema 2; invalid in a schema 1 file
  h5::Handle m_proposals, m_proposal_text;  // invalid in a file written before proposals
  std::optional<tests::Tables> m_tests;   // absent in files written before per-test outcomes
  CampaignInfo m_campaign;
  std::set<TrialKey> m_trial_keys;
  hsize_t m_candidate_count = 0;
  hsize_t m_trial_count = 0;
  hsize_t m_text_bytes = 0;   // rows of /candidate_text, pending ones included
  hsize_t m_proposal_count = 0;          // rows of /proposals, pending ones included
  hsize_t m_proposal_text_bytes = 0;     // bytes of /proposal_text, pending ones included
  bool m_broken = false;
  std::vector<std::string> m_repairs;   // what open_for_append repaired, for the user

  // Rows of the open Store::Group, written when the outermost one commits.
  struct Pending {
    std::vector<char> candidate_text;
    std::vector<schema::CandidateRow> candidates;
    std::vector<schema::MetricRow> metrics;
    std::vector<schema::TrialRow> trials;
    std::vector<schema::EventRow> events;
    std::vector<schema::EstimateRow> estimates;
    std::vector<schema::ConfirmationRow> confirmations;
    std::vector<char> proposal_text;
    std::vector<schema::ProposalRow> proposals;
    bool empty() const {
      return candidate_text.empty() && candidates.empty() && metrics.empty() && trials.empty() && events.empty() &&
             estimates.empty() && confirmations.empty() && proposal_text.empty() && proposals.empty();
    }
  };
  int m_group_depth = 0;
  Pending m_pending;

  bool grouping() const { return m_group_depth > 0; }

  // Opens the tables; when one cannot be opened (a damaged file), says which, and what can
  // still be read, rather than only the first HDF5 error.
  void open_tables() {
    try {
      open_tables_unchecked();
    } catch (const h5::Error& first) {
      throw StoreError(damage_report(first.what()));
    }
  }

  std::string damage_report(const std::string& first) const {
    std::vector<std::string> broken, readable;
    const char* names[] = {schema::kCandidates, schema::kTrials, schema::kMetrics, schema::kEvents,
                           schema::kEstimates, schema::kConfirmations, schema::kCandidateText};
    for (const char* name : names) {
      if (m_campaign.schema < 2 && (name == schema::kEstimates || name == schema::kConfirmations ||
                                    name == schema::kCandidateText))
        continue;
      try {
        h5::Handle table(FLOTILLA_H5(H5Dopen2(m_file.id(), name, H5P_DEFAULT)));
        readable.push_back(std::string("/") + name + " (" + std::to_string(h5::row_count(table.id())) + " rows)");
      } catch (const h5::Error& e) {
        broken.push_back(std::string("/") + name + ": " + e.what());
      }
    }
    // A table outside the list (the proposal journal's) failed: its error, with the path.
    if (broken.empty()) return m_path.string() + ": " + first;
    std::string text = m_path.string() + ": the file is damaged: ";
    for (std::size_t i = 0; i < broken.size(); ++i) text += (i ? "; " : "") + broken[i];
    text += ". Still readable: /campaign";
    for (const auto& r : readable) text += ", " + r;
    return text + ". Nothing was changed: keep a copy, and restore the file or start a new one "
                  "(--campaign.results=FILE)";
  }

  void open_tables_unchecked() {
    m_types = schema::make_memory_types();
    m_candidates = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kCandidates, H5P_DEFAULT)));
    m_trials = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kTrials, H5P_DEFAULT)));
    m_metrics = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kMetrics, H5P_DEFAULT)));
    m_events = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kEvents, H5P_DEFAULT)));
    if (m_campaign.schema >= 2) {
      m_estimates = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kEstimates, H5P_DEFAULT)));
      m_confirmations = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kConfirmations, H5P_DEFAULT)));
      m_candidate_text = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kCandidateText, H5P_DEFAULT)));
    }
    if (FLOTILLA_H5(H5Lexists(m_file.id(), schema::kProposals, H5P_DEFAULT)) > 0) {
      m_proposals = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kProposals, H5P_DEFAULT)));
      m_proposal_text = h5::Handle(FLOTILLA_H5(H5Dopen2(m_file.id(), schema::kProposalText, H5P_DEFAULT)));
    }
  }

  // Proposals came after schema 2's first files: such a file gains the empty tables when it is
  // reopened for appending, before SWMR starts (SWMR allows no new objects later).
  void create_proposal_tables() {
    h5::Handle file_type = schema::make_file_type(m_types.proposal.id());
    m_proposals = h5::create_table(m_file.id(), schema::kProposals, file_type.id(), schema::kChunkRows);
    m_proposal_text = h5::create_table(m_file.id(), schema::kProposalText, H5T_STD_U8LE, schema::kTextChunkBytes);
  }

  void create_tables() {
    m_types = schema::make_memory_types();
    const auto table = [&](const char* name, const h5::Handle& memory_type) {
      h5::Handle file_type = schema::make_file_type(memory_type.id());
      return h5::create_table(m_file.id(), name, file_type.id(), schema::kChunkRows);
    };
    m_candidates = table(schema::kCandidates, m_types.candidate);
    m_trials = table(schema::kTrials, m_types.trial);
    m_metrics = table(schema::kMetrics, m_types.metric);
    m_events = table(schema::kEvents, m_types.event);
    m_estimates = table(schema::kEstimates, m_types.estimate);
    m_confirmations = table(schema::kConfirmations, m_types.confirmation);
    m_candidate_text = h5::create_table(m_file.id(), schema::kCandidateText, H5T_STD_U8LE, schema::kTextChunkBytes);
    create_proposal_tables();
  }

  // Cuts `table` to its first `keep` rows when a failed append left more, and says so.
  void cut(const h5::Handle& table, const char* name, std::size_t rows, std::size_t keep) {
    if (keep >= rows) return;
    h5::truncate_rows(table.id(), keep);
    m_repairs.push_back(fmt_rows(name, rows - keep));
  }
  static std::string fmt_rows(const char* name, std::size_t n) {
    return std::string("/") + name + ": " + std::to_string(n) + (n == 1 ? " row" : " rows") +
           " a failed write left unwritten, cut";
  }
  // `rows`: the caller's buffer, kept from one slice to the next.
  bool read_trial_rows(hsize_t start, hsize_t count, std::vector<schema::TrialRow>& rows,
                       std::vector<TrialRecord>& records) const;
  bool read_trial_outcomes(hsize_t start, hsize_t count, std::vector<schema::TrialOutcomeRow>& rows,
                           std::vector<TrialRecord>& records) const;

  template <class Row>
  static std::size_t written_prefix(const std::vector<Row>& rows) {
    std::size_t n = 0;
    while (n < rows.size() && schema::written(rows[n])) ++n;
    return n;
  }
  template <class Row>
  void cut_unwritten(const h5::Handle& table, const h5::Handle& type, const char* name) {
    const auto rows = h5::read_table<Row>(table.id(), type.id());
    cut(table, name, rows.size(), written_prefix(rows));
  }

  // Rebuilds the writer's cache, and repairs what a writer that died or failed mid-write left:
  // rows a failed append left unwritten (Schema.h, written()) are cut from every table, and so
  // are metrics of a trial row that was never written and text no candidate row points at.
  void load_writer_state() {
    const auto candidates = h5::read_table<schema::CandidateRow>(m_candidates.id(), m_types.candidate.id());
    std::size_t keep = 0;
    std::int64_t text_end = 0;
    for (; keep < candidates.size() && schema::written(candidates[keep], keep); ++keep)
      if (candidates[keep].text_bytes > 0)
        text_end = std::max(text_end, candidates[keep].text_start + candidates[keep].text_bytes);
    cut(m_candidates, schema::kCandidates, candidates.size(), keep);
    m_candidate_count = keep;
    m_text_bytes = h5::row_count(m_candidate_text.id());
    cut(m_candidate_text, schema::kCandidateText, m_text_bytes, static_cast<std::size_t>(text_end));
    m_text_bytes = std::min<hsize_t>(m_text_bytes, static_cast<hsize_t>(text_end));

    const auto keys = h5::read_table<schema::TrialKeyRow>(m_trials.id(), m_types.trial_key.id());
    m_trial_count = written_prefix(keys);
    cut(m_trials, schema::kTrials, keys.size(), m_trial_count);
    for (std::size_t i = 0; i < m_trial_count; ++i)
      m_trial_keys.emplace(keys[i].candidate, keys[i].kind, keys[i].index, keys[i].attempt);

    const auto metrics = h5::read_table<schema::MetricNameRow>(m_metrics.id(), m_types.metric_name.id());
    std::size_t kept = written_prefix(metrics);
    while (kept > 0 && metrics[kept - 1].trial >= static_cast<std::int64_t>(m_trial_count)) --kept;
    cut(m_metrics, schema::kMetrics, metrics.size(), kept);

    cut_unwritten<schema::EventRow>(m_events, m_types.event, schema::kEvents);
    cut_unwritten<schema::EstimateRow>(m_estimates, m_types.estimate, schema::kEstimates);
    cut_unwritten<schema::ConfirmationRow>(m_confirmations, m_types.confirmation, schema::kConfirmations);

    // Text before rows: a proposal row is written after its bytes, so text past the last
    // written row's end is what a failed append left.
    const auto proposals = h5::read_table<schema::ProposalRow>(m_proposals.id(), m_types.proposal.id());
    m_proposal_count = written_prefix(proposals);
    cut(m_proposals, schema::kProposals, proposals.size(), m_proposal_count);
    std::int64_t proposal_text_end = 0;
    for (std::size_t i = 0; i < m_proposal_count; ++i)
      proposal_text_end = std::max({proposal_text_end, proposals[i].patch_start + proposals[i].patch_bytes,
                                    proposals[i].rationale_start + proposals[i].rationale_bytes});
    m_proposal_text_bytes = h5::row_count(m_proposal_text.id());
    cut(m_proposal_text, schema::kProposalText, m_proposal_text_bytes, static_cast<std::size_t>(proposal_text_end));
    m_proposal_text_bytes = std::min<hsize_t>(m_proposal_text_bytes, static_cast<hsize_t>(proposal_text_end));
  }

  void start_swmr_write() {
    // Already on when a Store of this process still has the file open (a reader opened while
    // an earlier writer was alive): HDF5 shares one open file per process and path.
    unsigned intent = 0;
    FLOTILLA_H5(H5Fget_intent(m_file.id(), &intent));
    if ((intent & H5F_ACC_SWMR_WRITE) == 0) FLOTILLA_H5(H5Fstart_swmr_write(m_file.id()));
  }

  // A SWMR reader sees a dataset as it was when opened until it asks for the current extent.
  void refresh(const h5::Handle& dataset) const {
    if (m_mode == Mode::swmr_read) FLOTILLA_H5(H5Drefresh(dataset.id()));
  }

  void require_writable() const {
    if (m_mode != Mode::write) throw StoreError(m_path.string() + ": opened read-only");
    if (m_broken) {
      throw StoreError(m_path.string() + ": an earlier write failed; reopen the file to continue");
    }
  }

  // Stops before a write that a nearly full filesystem could fail half-way: nothing is written,
  // the Store stays usable, and the campaign resumes once there is room again.
  void require_space() const {
    struct statvfs fs {};
    const auto dir = m_path.parent_path().empty() ? std::filesystem::path(".") : m_path.parent_path();
    if (::statvfs(dir.c_str(), &fs) != 0) return;  // cannot tell: let the write say
    const auto available = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
    if (available >= reserve_bytes()) return;
    throw StoreSpaceError(m_path.string() + ": only " + std::to_string(available / 1024) + " KiB free on its filesystem (" +
                     dir.string() + "); flotilla stops below " + std::to_string(reserve_bytes() / 1024) +
                     " KiB, before a write could fail half-way. Free some space and run the same command again "
                     "to resume");
  }

  // Runs one record's writes; a failure part-way leaves the Store refusing further writes.
  template <class Action>
  auto write(Action&& action) {
    require_writable();
    require_space();
    try {
      return with_path(m_path, action);
    } catch (const tests::InvalidTests& error) {
      // Checked before any byte is written: the file is intact and the Store stays usable.
      throw StoreError(m_path.string() + ": " + error.what());
    } catch (...) {
      m_broken = true;
      throw;
    }
  }

  // Appends and flushes every row the group holds (a no-op when it holds none).
  void commit_pending() {
    if (m_pending.empty()) return;
    Pending rows = std::move(m_pending);
    m_pending = {};
    write([&] {
      const auto append = [](const h5::Handle& table, const h5::Handle& type, const auto& list) {
        if (!list.empty()) h5::append_rows(table.id(), type.id(), list.data(), list.size());
      };
      // Proposals before the candidates they became: a candidate whose origin names a proposal
      // always finds it (a proposal without its candidate is completed on resume).
      if (!rows.proposal_text.empty())
        h5::append_rows(m_proposal_text.id(), H5T_NATIVE_UINT8, rows.proposal_text.data(), rows.proposal_text.size());
      append(m_proposals, m_types.proposal, rows.proposals);
      if (!rows.candidate_text.empty())
        h5::append_rows(m_candidate_text.id(), H5T_NATIVE_UINT8, rows.candidate_text.data(), rows.candidate_text.size());
      append(m_candidates, m_types.candidate, rows.candidates);
      append(m_metrics, m_types.metric, rows.metrics);
      append(m_trials, m_types.trial, rows.trials);
      append(m_events, m_types.event, rows.events);
      append(m_estimates, m_types.estimate, rows.estimates);
      append(m_confirmations, m_types.confirmation, rows.confirmations);
    });
  }

  // Rows of a schema 2 table (none in a schema 1 file), up to the first unwritten one.
  template <class Row>
  std::vector<Row> read_optional(const h5::Handle& table, const h5::Handle& type) const {
    if (!table.valid()) return {};
    refresh(table);
    auto rows = h5::read_table<Row>(table.id(), type.id());
    rows.resize(written_prefix(rows));
    return rows;
  }
};

Store::Store(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() {
  // A Group must not outlive its Store; rows that one still holds when the Store closes are written.
  if (!m_impl || m_impl->m_mode != Impl::Mode::write || m_impl->m_broken) return;
  try {
    m_impl->commit_pending();
  } catch (...) {
    // Nobody is left to report to: the records of that group are lost, as after a crash.
  }
}

namespace {

// Where a new file is made before it is complete: beside it, hidden, named for this process.
std::filesystem::path creating_path(const std::filesystem::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".creating." + std::to_string(::getpid()));
}

// Files a killed creator left half-made (its pid is gone): never a campaign, so removed.
void remove_stale_creations(const std::filesystem::path& path) {
  const auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  const std::string prefix = "." + path.filename().string() + ".creating.";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) continue;  // still at work
    std::filesystem::remove(entry.path(), error);
  }
}

}  // namespace

// The file is made complete under a temporary name (header, every table, SWMR mode on) and
// then renamed into place without replacing anything (renameat2 RENAME_NOREPLACE): a process
// killed while creating leaves no half-made file under the campaign's name, only a hidden
// temporary that the next create removes, and two creators cannot both win.
Store Store::create(const std::filesystem::path& path, const CampaignInfo& info) {
  h5::init();
  std::error_code exists_error;
  if (std::filesystem::exists(path, exists_error)) throw StoreError(path.string() + ": already exists");
  remove_stale_creations(path);
  const auto temporary = creating_path(path);
  auto impl = std::make_unique<Impl>();
  impl->m_path = path;
  impl->m_mode = Impl::Mode::write;
  impl->m_campaign = info;
  try {
    with_path(path, [&] {
      impl->m_file = file::create(temporary);
      impl->m_lock = WriterLock::acquire(temporary);
      file::write_header(impl->m_file.id(), info);
      impl->create_tables();
      impl->m_tests = tests::Tables::create(impl->m_file.id());
      // Every object exists now; after this no new object may be created (SWMR rule).
      FLOTILLA_H5(H5Fstart_swmr_write(impl->m_file.id()));
    });
    if (::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) != 0)
      throw StoreError(path.string() + (errno == EEXIST ? std::string(": already exists")
                                                        : ": cannot create: " + std::string(std::strerror(errno))));
  } catch (...) {
    impl.reset();  // closes the file and releases the lock before the temporary goes
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  return Store(std::move(impl));
}

Store Store::open_for_append(const std::filesystem::path& path) {
  h5::init();
  file::require_hdf5_file(path);
  auto impl = std::make_unique<Impl>();
  impl->m_path = path;
  impl->m_mode = Impl::Mode::write;
  impl->m_lock = WriterLock::acquire(path);
  with_path(path, [&] {
    impl->m_file = file::open_write(path);
    impl->m_campaign = file::read_campaign(impl->m_file.id(), file::check_schema(impl->m_file.id(), path));
    if (impl->m_campaign.schema != kSchemaVersion)
      throw StoreError(path.string() + ": written by flotilla " + impl->m_campaign.flotilla_version + " in schema " +
                       std::to_string(impl->m_campaign.schema) + "; this flotilla reads it (flotilla results) but "
                       "appends only to schema " + std::to_string(kSchemaVersion) +
                       " files: finish it with that flotilla, or start a new results file");
    impl->open_tables();
    if (!impl->m_proposals.valid()) impl->create_proposal_tables();
    impl->load_writer_state();
    // An older file gains the (empty) /tests group now: SWMR allows no new objects later.
    if (tests::Tables::present(impl->m_file.id())) tests::Tables::add_missing(impl->m_file.id());
    impl->m_tests = tests::Tables::present(impl->m_file.id()) ? tests::Tables::open(impl->m_file.id(), false)
                                                              : tests::Tables::create(impl->m_file.id());
    impl->m_tests->load_writer_state();
    impl->start_swmr_write();
  });
  return Store(std::move(impl));
}

Store Store::open_read(const std::filesystem::path& path) {
  h5::init();
  file::require_hdf5_file(path);
  auto impl = std::make_unique<Impl>();
  impl->m_path = path;
  with_path(path, [&] {
    bool swmr = false;
    impl->m_file = file::open_read(path, swmr);
    impl->m_mode = swmr ? Impl::Mode::swmr_read : Impl::Mode::read;
    impl->m_campaign = file::read_campaign(impl->m_file.id(), file::check_schema(impl->m_file.id(), path));
    impl->open_tables();
    if (tests::Tables::present(impl->m_file.id())) {
      impl->m_tests = tests::Tables::open(impl->m_file.id(), impl->m_mode == Impl::Mode::swmr_read);
    }
  });
  return Store(std::move(impl));
}

const std::filesystem::path& Store::path() const { return m_impl->m_path; }

const std::vector<std::string>& Store::repairs() const { return m_impl->m_repairs; }

const CampaignInfo& Store::campaign() const { return m_impl->m_campaign; }

std::vector<CandidateRecord> Store::candidates() const {
  m_impl->commit_pending();
  return with_path(m_impl->m_path, [&] {
    m_impl->refresh(m_impl->m_candidates);
    const auto rows = h5::read_table<schema::CandidateRow>(m_impl->m_candidates.id(),
                                                           m_impl->m_types.candidate.id());
    std::vector<CandidateRecord> records;
    records.reserve(rows.size());
    bool refreshed = false;
    for (const auto& row : rows) {
      if (!schema::written(row, records.size())) break;  // left by a failed append (Schema.h)
      records.push_back(schema::from_row(row));
      if (row.text_bytes <= 0 || !m_impl->m_candidate_text.valid()) continue;
      if (!refreshed) m_impl->refresh(m_impl->m_candidate_text), refreshed = true;
      std::string text(static_cast<std::size_t>(row.text_bytes), '\0');
      h5::read_rows(m_impl->m_candidate_text.id(), H5T_NATIVE_UINT8, text.data(), text.size(),
                    static_cast<hsize_t>(row.text_start));
      records.back().config = std::move(text);
    }
    return records;
  });
}

// Trial rows read at a time by Store::trials: whole chunks (schema::kChunkRows), about 6.5 MB.
constexpr hsize_t kTrialSlice = schema::kChunkRows * 64;

namespace {

// Whether results::summarize reads the trial's reason or output tail: those of a failed trial
// (its reason, first error line, last message line, build output) and of a confirmation pair
// (whose reason says why a pair without a ratio failed).
bool summary_reads_texts(const TrialRecord& t) {
  return t.status != TrialStatus::ok || t.kind == TrialKind::confirm;
}

}  // namespace

// Rows [start, start + count) of /trials appended to `records`, all their fields; false when a row
// a failed append left unwritten ends them (the rows after it are not read).
bool Store::Impl::read_trial_rows(hsize_t start, hsize_t count, std::vector<schema::TrialRow>& rows,
                                  std::vector<TrialRecord>& records) const {
  rows.resize(static_cast<std::size_t>(count));
  h5::read_rows(m_trials.id(), m_types.trial.id(), rows.data(), count, start);
  const auto written = written_prefix(rows);
  for (std::size_t i = 0; i < written; ++i) records.push_back(schema::from_row(rows[i]));
  return written == rows.size();
}

// The same with the outcome fields only (TrialFields::outcomes): the texts are read, by their
// rows, of the trials whose summary needs them; they are most of a row's 1.6 KB.
bool Store::Impl::read_trial_outcomes(hsize_t start, hsize_t count, std::vector<schema::TrialOutcomeRow>& rows,
                                      std::vector<TrialRecord>& records) const {
  rows.resize(static_cast<std::size_t>(count));
  h5::read_rows(m_trials.id(), m_types.trial_outcome.id(), rows.data(), count, start);
  const auto written = written_prefix(rows);
  const auto first = records.size();
  std::vector<hsize_t> with_texts;
  for (std::size_t i = 0; i < written; ++i) {
    records.push_back(schema::from_row(rows[i]));
    if (summary_reads_texts(records.back())) with_texts.push_back(start + i);
  }
  if (!with_texts.empty()) {
    std::vector<schema::TrialTextRow> texts(with_texts.size());
    h5::read_points(m_trials.id(), m_types.trial_text.id(), texts.data(), with_texts);
    for (std::size_t k = 0; k < texts.size(); ++k)
      schema::add_texts(records[first + static_cast<std::size_t>(with_texts[k] - start)], texts[k]);
  }
  return written == rows.size();
}

std::vector<TrialRecord> Store::trials(TrialFields fields) const {
  m_impl->commit_pending();
  return with_path(m_impl->m_path, [&] {
    // Trials before metrics: a trial row is written after its metrics, so every trial read
    // here finds its metrics below; metrics of trials appended in between are skipped.
    m_impl->refresh(m_impl->m_trials);
    // In slices of whole chunks: a trial row is 1.6 KB of fixed-size fields, so reading the whole
    // table at once held 1.6 GB of rows beside the records at 10^6 trials (bench/scale).
    std::vector<TrialRecord> records;
    const hsize_t total = h5::row_count(m_impl->m_trials.id());
    records.reserve(static_cast<std::size_t>(total));
    std::vector<schema::TrialRow> rows;
    std::vector<schema::TrialOutcomeRow> outcomes;
    for (hsize_t start = 0; start < total; start += kTrialSlice) {
      const hsize_t count = std::min(kTrialSlice, total - start);
      const bool whole = fields == TrialFields::all ? m_impl->read_trial_rows(start, count, rows, records)
                                                    : m_impl->read_trial_outcomes(start, count, outcomes, records);
      if (!whole) break;
    }
    m_impl->refresh(m_impl->m_metrics);
    auto metrics = h5::read_table<schema::MetricRow>(m_impl->m_metrics.id(), m_impl->m_types.metric.id());
    metrics.resize(Impl::written_prefix(metrics));
    for (const auto& metric : metrics) {
      if (metric.trial < 0 || metric.trial >= static_cast<std::int64_t>(records.size())) continue;
      records[metric.trial].metrics.push_back({std::string(metric.name), metric.value});
    }
    return records;
  });
}

std::vector<EventRecord> Store::events() const {
  m_impl->commit_pending();
  return with_path(m_impl->m_path, [&] {
    m_impl->refresh(m_impl->m_events);
    auto rows = h5::read_table<schema::EventRow>(m_impl->m_events.id(), m_impl->m_types.event.id());
    rows.resize(Impl::written_prefix(rows));
    std::vector<EventRecord> records;
    records.reserve(rows.size());
    for (const auto& row : rows) records.push_back(schema::from_row(row));
    return records;
  });
}

void Store::add_candidate(const CandidateRecord& record) {
  Impl& impl = *m_impl;
  impl.require_writable();
  if (record.id != static_cast<std::int64_t>(impl.m_candidate_count)) {
    throw StoreError(impl.m_path.string() + ": candidate id " + std::to_string(record.id) +
                     " is out of order (expected " + std::to_string(impl.m_candidate_count) + ")");
  }
  schema::CandidateRow row = schema::to_row(record);
  // A configuration the row cannot hold goes whole to /candidate_text, before the row that
  // points at it: a reader never finds a row whose text is not there yet.
  const bool long_text = record.config.size() >= sizeof(row.config);
  if (long_text) {
    row.text_start = static_cast<std::int64_t>(impl.m_text_bytes);
    row.text_bytes = static_cast<std::int64_t>(record.config.size());
  }
  if (impl.grouping()) {
    if (long_text) impl.m_pending.candidate_text.insert(impl.m_pending.candidate_text.end(), record.config.begin(),
                                                        record.config.end());
    impl.m_pending.candidates.push_back(row);
  } else {
    impl.write([&] {
      if (long_text)
        h5::append_rows(impl.m_candidate_text.id(), H5T_NATIVE_UINT8, record.config.data(), record.config.size());
      h5::append_rows(impl.m_candidates.id(), impl.m_types.candidate.id(), &row, 1);
    });
  }
  if (long_text) impl.m_text_bytes += record.config.size();
  ++impl.m_candidate_count;
}

bool Store::add_trial(const TrialRecord& record) {
  Impl& impl = *m_impl;
  impl.require_writable();
  const TrialKey key = key_of(record.candidate, record.kind, record.index, record.attempt);
  if (impl.m_trial_keys.contains(key)) return false;
  const auto trial_index = static_cast<std::int64_t>(impl.m_trial_count);
  std::vector<schema::MetricRow> rows;
  for (const Metric& metric : record.metrics) rows.push_back(schema::to_row(metric, trial_index));
  const schema::TrialRow row = schema::to_row(record);
  if (impl.grouping()) {
    impl.m_pending.metrics.insert(impl.m_pending.metrics.end(), rows.begin(), rows.end());
    impl.m_pending.trials.push_back(row);
  } else {
    impl.write([&] {
      if (!rows.empty()) {
        h5::append_rows(impl.m_metrics.id(), impl.m_types.metric.id(), rows.data(), rows.size());
      }
      h5::append_rows(impl.m_trials.id(), impl.m_types.trial.id(), &row, 1);
    });
  }
  impl.m_trial_keys.insert(key);
  ++impl.m_trial_count;
  return true;
}

bool has_live_writer(const std::filesystem::path& path) { return WriterLock::is_held(path); }

void Store::add_event(const EventRecord& record) {
  Impl& impl = *m_impl;
  const schema::EventRow row = schema::to_row(record);
  if (impl.grouping()) {
    impl.require_writable();
    impl.m_pending.events.push_back(row);
    return;
  }
  impl.write([&] { h5::append_rows(impl.m_events.id(), impl.m_types.event.id(), &row, 1); });
}

std::int64_t Store::add_proposal(const ProposalRecord& record) {
  Impl& impl = *m_impl;
  impl.require_writable();
  schema::ProposalRow row = schema::to_row(record);
  std::vector<char> text;
  const auto place = [&](const std::string& bytes, std::int64_t& start, std::int64_t& size) {
    start = static_cast<std::int64_t>(impl.m_proposal_text_bytes + text.size());
    size = static_cast<std::int64_t>(bytes.size());
    text.insert(text.end(), bytes.begin(), bytes.end());
  };
  place(record.patch, row.patch_start, row.patch_bytes);
  place(record.rationale, row.rationale_start, row.rationale_bytes);
  const auto id = static_cast<std::int64_t>(impl.m_proposal_count);
  if (impl.grouping()) {
    impl.m_pending.proposal_text.insert(impl.m_pending.proposal_text.end(), text.begin(), text.end());
    impl.m_pending.proposals.push_back(row);
  } else {
    impl.write([&] {
      if (!text.empty()) h5::append_rows(impl.m_proposal_text.id(), H5T_NATIVE_UINT8, text.data(), text.size());
      h5::append_rows(impl.m_proposals.id(), impl.m_types.proposal.id(), &row, 1);
    });
  }
  impl.m_proposal_text_bytes += text.size();
  ++impl.m_proposal_count;
  return id;
}

std::vector<ProposalRecord> Store::proposals() const {
  m_impl->commit_pending();
  return with_path(m_impl->m_path, [&] {
    std::vector<ProposalRecord> records;
    if (!m_impl->m_proposals.valid()) return records;
    const auto rows = m_impl->read_optional<schema::ProposalRow>(m_impl->m_proposals, m_impl->m_types.proposal);
    if (rows.empty()) return records;
    m_impl->refresh(m_impl->m_proposal_text);
    const auto bytes = h5::row_count(m_impl->m_proposal_text.id());
    const auto text_of = [&](std::int64_t start, std::int64_t size) {
      std::string text;
      if (size <= 0 || start < 0 || static_cast<hsize_t>(start + size) > bytes) return text;
      text.resize(static_cast<std::size_t>(size));
      h5::read_rows(m_impl->m_proposal_text.id(), H5T_NATIVE_UINT8, text.data(), text.size(),
                    static_cast<hsize_t>(start));
      return text;
    };
    for (const auto& row : rows) {
      records.push_back(schema::from_row(row));
      records.back().id = static_cast<std::int64_t>(records.size() - 1);
      records.back().patch = text_of(row.patch_start, row.patch_bytes);
      records.back().rationale = text_of(row.rationale_start, row.rationale_bytes);
    }
    return records;
  });
}

void Store::add_last_event(const EventRecord& record) {
  Impl& impl = *m_impl;
  impl.require_writable();
  const schema::EventRow row = schema::to_row(record);
  try {
    with_path(impl.m_path, [&] { h5::append_rows(impl.m_events.id(), impl.m_types.event.id(), &row, 1); });
  } catch (...) {
    impl.m_broken = true;
    throw;
  }
}

void Store::add_estimate(const EstimateRecord& record) {
  Impl& impl = *m_impl;
  const schema::EstimateRow row = schema::to_row(record);
  if (impl.grouping()) {
    impl.require_writable();
    impl.m_pending.estimates.push_back(row);
    return;
  }
  impl.write([&] { h5::append_rows(impl.m_estimates.id(), impl.m_types.estimate.id(), &row, 1); });
}

void Store::add_confirmation(const ConfirmationRecord& record) {
  Impl& impl = *m_impl;
  const schema::ConfirmationRow row = schema::to_row(record);
  if (impl.grouping()) {
    impl.require_writable();
    impl.m_pending.confirmations.push_back(row);
    return;
  }
  impl.write([&] { h5::append_rows(impl.m_confirmations.id(), impl.m_types.confirmation.id(), &row, 1); });
}

std::vector<EstimateRecord> Store::estimates() const {
  m_impl->commit_pending();
  return with_path(m_impl->m_path, [&] {
    std::vector<EstimateRecord> records;
    for (const auto& row : m_impl->read_optional<schema::EstimateRow>(m_impl->m_estimates, m_impl->m_types.estimate))
      records.push_back(schema::from_row(row));
    return records;
  });
}

std::vector<ConfirmationRecord> Store::confirmations() const {
  m_impl->commit_pending();
  return with_path(m_impl->m_path, [&] {
    std::vector<ConfirmationRecord> records;
    for (const auto& row :
         m_impl->read_optional<schema::ConfirmationRow>(m_impl->m_confirmations, m_impl->m_types.confirmation))
      records.push_back(schema::from_row(row));
    return records;
  });
}

std::int64_t Store::add_test_suite(const TestSuite& suite) {
  Impl& impl = *m_impl;
  impl.commit_pending();
  return impl.write([&] { return impl.m_tests->add_suite(suite); });
}

bool Store::add_test_results(const CandidateTests& tests) {
  Impl& impl = *m_impl;
  impl.commit_pending();
  return impl.write([&] { return impl.m_tests->add_run(tests); });
}

Store::Group::Group(Store& store) : m_store(&store) {
  store.m_impl->require_writable();
  ++store.m_impl->m_group_depth;
}

Store::Group::~Group() {
  if (!m_open) return;
  try {
    commit();
  } catch (...) {
    // write() has marked the Store broken: its next write reports the failure.
  }
}

void Store::Group::commit() {
  if (!m_open) return;
  m_open = false;
  Impl& impl = *m_store->m_impl;
  if (--impl.m_group_depth == 0) impl.commit_pending();
}

std::vector<std::int64_t> Store::tested_candidates() const {
  if (!m_impl->m_tests) return {};
  return with_path(m_impl->m_path, [&] {
    std::vector<std::int64_t> candidates;
    for (const auto& run : m_impl->m_tests->runs()) candidates.push_back(run.candidate);
    return candidates;
  });
}

std::optional<CandidateTests> Store::test_results(std::int64_t candidate) const {
  if (!m_impl->m_tests) return std::nullopt;
  return with_path(m_impl->m_path, [&]() -> std::optional<CandidateTests> {
    const auto run = m_impl->m_tests->run_of(candidate);
    if (!run) return std::nullopt;
    return m_impl->m_tests->read_run(*run);
  });
}

std::optional<std::vector<std::uint8_t>> Store::test_outcomes(std::int64_t candidate) const {
  if (!m_impl->m_tests) return std::nullopt;
  return with_path(m_impl->m_path, [&]() -> std::optional<std::vector<std::uint8_t>> {
    const auto run = m_impl->m_tests->run_of(candidate);
    if (!run) return std::nullopt;
    return m_impl->m_tests->read_outcomes(*run);
  });
}

TestSuite Store::test_suite(std::int64_t id) const {
  if (!m_impl->m_tests) {
    throw StoreError(m_impl->m_path.string() + ": no per-test outcomes in this file (written before flotilla recorded them)");
  }
  return with_path(m_impl->m_path, [&] { return m_impl->m_tests->suite(id); });
}

}  // namespace flotilla::results
