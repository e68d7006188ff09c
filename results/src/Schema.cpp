// Schema.cpp — compound types for the campaign tables and record <-> row conversion.
#include "Schema.h"

#include <cstring>

#include "flotilla/results/Stats.h"

namespace flotilla::results {

std::string_view to_string(TrialKind kind) {
  switch (kind) {
    case TrialKind::explore: return "explore";
    case TrialKind::evaluate: return "evaluate";
    case TrialKind::confirm: return "confirm";
    case TrialKind::warmup: return "warmup";
    case TrialKind::build: return "build";
  }
  return "unknown";   // a value read from a newer file
}

std::string_view to_string(TrialStatus status) {
  switch (status) {
    case TrialStatus::ok: return "ok";
    case TrialStatus::failed: return "failed";
    case TrialStatus::timeout: return "timeout";
    case TrialStatus::cancelled: return "cancelled";
    case TrialStatus::build_failed: return "build_failed";
  }
  return "unknown";
}

std::string_view to_string(ProposalStatus status) {
  switch (status) {
    case ProposalStatus::accepted: return "accepted";
    case ProposalStatus::refused: return "refused";
    case ProposalStatus::answered: return "answered";
  }
  return "unknown";
}

}  // namespace flotilla::results

namespace flotilla::results::schema {

namespace {

void add_field(hid_t compound, const char* name, std::size_t offset, hid_t type) {
  FLOTILLA_H5(H5Tinsert(compound, name, offset, type));
}

void add_string(hid_t compound, const char* name, std::size_t offset, std::size_t size) {
  h5::Handle type = h5::string_type(size);   // H5Tinsert copies it
  add_field(compound, name, offset, type.id());
}

h5::Handle compound(std::size_t size) {
  return h5::Handle(FLOTILLA_H5(H5Tcreate(H5T_COMPOUND, size)));
}

// Enums rather than bare int8 so that h5dump and h5py show the names next to the numbers.
h5::Handle kind_type() {
  h5::Handle type(FLOTILLA_H5(H5Tenum_create(H5T_NATIVE_INT8)));
  for (TrialKind kind : {TrialKind::explore, TrialKind::evaluate, TrialKind::confirm, TrialKind::warmup,
                         TrialKind::build}) {
    const auto value = static_cast<std::int8_t>(kind);
    FLOTILLA_H5(H5Tenum_insert(type.id(), std::string(to_string(kind)).c_str(), &value));
  }
  return type;
}

h5::Handle status_type() {
  h5::Handle type(FLOTILLA_H5(H5Tenum_create(H5T_NATIVE_INT8)));
  for (TrialStatus status : {TrialStatus::ok, TrialStatus::failed, TrialStatus::timeout,
                             TrialStatus::cancelled, TrialStatus::build_failed}) {
    const auto value = static_cast<std::int8_t>(status);
    FLOTILLA_H5(H5Tenum_insert(type.id(), std::string(to_string(status)).c_str(), &value));
  }
  return type;
}

h5::Handle verdict_type() {
  h5::Handle type(FLOTILLA_H5(H5Tenum_create(H5T_NATIVE_INT8)));
  using stats::Verdict;
  for (Verdict v : {Verdict::pending, Verdict::faster, Verdict::no_difference, Verdict::slower, Verdict::failed}) {
    const auto value = static_cast<std::int8_t>(v);
    FLOTILLA_H5(H5Tenum_insert(type.id(), std::string(stats::verdict_key(v)).c_str(), &value));
  }
  return type;
}

h5::Handle candidate_type() {
  h5::Handle type = compound(sizeof(CandidateRow));
  add_field(type.id(), "id", offsetof(CandidateRow, id), H5T_NATIVE_INT64);
  add_field(type.id(), "round", offsetof(CandidateRow, round), H5T_NATIVE_INT32);
  add_string(type.id(), "config", offsetof(CandidateRow, config), sizeof(CandidateRow::config));
  add_string(type.id(), "origin", offsetof(CandidateRow, origin), sizeof(CandidateRow::origin));
  add_field(type.id(), "text_start", offsetof(CandidateRow, text_start), H5T_NATIVE_INT64);
  add_field(type.id(), "text_bytes", offsetof(CandidateRow, text_bytes), H5T_NATIVE_INT64);
  return type;
}

h5::Handle estimate_type() {
  h5::Handle type = compound(sizeof(EstimateRow));
  add_field(type.id(), "candidate", offsetof(EstimateRow, candidate), H5T_NATIVE_INT64);
  add_field(type.id(), "repeats", offsetof(EstimateRow, repeats), H5T_NATIVE_INT32);
  add_field(type.id(), "estimate", offsetof(EstimateRow, estimate), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "low", offsetof(EstimateRow, low), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "high", offsetof(EstimateRow, high), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "coverage", offsetof(EstimateRow, coverage), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "time", offsetof(EstimateRow, time), H5T_NATIVE_DOUBLE);
  return type;
}

h5::Handle confirmation_type() {
  h5::Handle type = compound(sizeof(ConfirmationRow));
  add_field(type.id(), "candidate", offsetof(ConfirmationRow, candidate), H5T_NATIVE_INT64);
  add_field(type.id(), "reference", offsetof(ConfirmationRow, reference), H5T_NATIVE_INT64);
  add_field(type.id(), "verdict", offsetof(ConfirmationRow, verdict), verdict_type().id());
  add_field(type.id(), "pairs", offsetof(ConfirmationRow, pairs), H5T_NATIVE_INT32);
  add_field(type.id(), "looks", offsetof(ConfirmationRow, looks), H5T_NATIVE_INT32);
  add_field(type.id(), "ratio", offsetof(ConfirmationRow, ratio), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "low", offsetof(ConfirmationRow, low), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "high", offsetof(ConfirmationRow, high), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "confidence", offsetof(ConfirmationRow, confidence), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "min_effect", offsetof(ConfirmationRow, min_effect), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "time", offsetof(ConfirmationRow, time), H5T_NATIVE_DOUBLE);
  add_string(type.id(), "reason", offsetof(ConfirmationRow, reason), sizeof(ConfirmationRow::reason));
  return type;
}

h5::Handle proposal_status_type() {
  h5::Handle type(FLOTILLA_H5(H5Tenum_create(H5T_NATIVE_INT8)));
  for (auto status : {ProposalStatus::accepted, ProposalStatus::refused, ProposalStatus::answered}) {
    const auto value = static_cast<std::int8_t>(status);
    FLOTILLA_H5(H5Tenum_insert(type.id(), std::string(to_string(status)).c_str(), &value));
  }
  return type;
}

h5::Handle proposal_type() {
  h5::Handle type = compound(sizeof(ProposalRow));
  add_field(type.id(), "round", offsetof(ProposalRow, round), H5T_NATIVE_INT32);
  add_field(type.id(), "proposer", offsetof(ProposalRow, proposer), H5T_NATIVE_INT32);
  add_field(type.id(), "parent", offsetof(ProposalRow, parent), H5T_NATIVE_INT64);
  add_field(type.id(), "hash", offsetof(ProposalRow, hash), H5T_NATIVE_UINT64);
  add_field(type.id(), "status", offsetof(ProposalRow, status), proposal_status_type().id());
  add_string(type.id(), "name", offsetof(ProposalRow, name), sizeof(ProposalRow::name));
  add_string(type.id(), "reason", offsetof(ProposalRow, reason), sizeof(ProposalRow::reason));
  add_field(type.id(), "patch_start", offsetof(ProposalRow, patch_start), H5T_NATIVE_INT64);
  add_field(type.id(), "patch_bytes", offsetof(ProposalRow, patch_bytes), H5T_NATIVE_INT64);
  add_field(type.id(), "rationale_start", offsetof(ProposalRow, rationale_start), H5T_NATIVE_INT64);
  add_field(type.id(), "rationale_bytes", offsetof(ProposalRow, rationale_bytes), H5T_NATIVE_INT64);
  add_field(type.id(), "time", offsetof(ProposalRow, time), H5T_NATIVE_DOUBLE);
  return type;
}

// The key fields, at the offsets of whichever row struct (TrialRow, TrialKeyRow) holds them.
template <class Row>
void add_trial_key(hid_t type, const h5::Handle& kind) {
  add_field(type, "candidate", offsetof(Row, candidate), H5T_NATIVE_INT64);
  add_field(type, "kind", offsetof(Row, kind), kind.id());
  add_field(type, "index", offsetof(Row, index), H5T_NATIVE_INT32);
  add_field(type, "attempt", offsetof(Row, attempt), H5T_NATIVE_INT32);
}

h5::Handle trial_type() {
  h5::Handle type = compound(sizeof(TrialRow));
  add_trial_key<TrialRow>(type.id(), kind_type());
  add_field(type.id(), "status", offsetof(TrialRow, status), status_type().id());
  add_field(type.id(), "start", offsetof(TrialRow, start), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "end", offsetof(TrialRow, end), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "exit_code", offsetof(TrialRow, exit_code), H5T_NATIVE_INT32);
  add_field(type.id(), "objective", offsetof(TrialRow, objective), H5T_NATIVE_DOUBLE);
  add_string(type.id(), "reason", offsetof(TrialRow, reason), sizeof(TrialRow::reason));
  add_string(type.id(), "output_tail", offsetof(TrialRow, output_tail),
             sizeof(TrialRow::output_tail));
  add_field(type.id(), "rank", offsetof(TrialRow, rank), H5T_NATIVE_INT32);
  add_string(type.id(), "host", offsetof(TrialRow, host), sizeof(TrialRow::host));
  add_string(type.id(), "device", offsetof(TrialRow, device), sizeof(TrialRow::device));
  add_string(type.id(), "cores", offsetof(TrialRow, cores), sizeof(TrialRow::cores));
  add_string(type.id(), "slurm_job", offsetof(TrialRow, slurm_job), sizeof(TrialRow::slurm_job));
  return type;
}

h5::Handle trial_key_type() {
  h5::Handle type = compound(sizeof(TrialKeyRow));
  add_trial_key<TrialKeyRow>(type.id(), kind_type());
  add_field(type.id(), "start", offsetof(TrialKeyRow, start), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "end", offsetof(TrialKeyRow, end), H5T_NATIVE_DOUBLE);
  return type;
}

h5::Handle trial_outcome_type() {
  h5::Handle type = compound(sizeof(TrialOutcomeRow));
  add_trial_key<TrialOutcomeRow>(type.id(), kind_type());
  add_field(type.id(), "status", offsetof(TrialOutcomeRow, status), status_type().id());
  add_field(type.id(), "start", offsetof(TrialOutcomeRow, start), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "end", offsetof(TrialOutcomeRow, end), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "exit_code", offsetof(TrialOutcomeRow, exit_code), H5T_NATIVE_INT32);
  add_field(type.id(), "objective", offsetof(TrialOutcomeRow, objective), H5T_NATIVE_DOUBLE);
  add_field(type.id(), "rank", offsetof(TrialOutcomeRow, rank), H5T_NATIVE_INT32);
  return type;
}

h5::Handle trial_text_type() {
  h5::Handle type = compound(sizeof(TrialTextRow));
  add_string(type.id(), "reason", offsetof(TrialTextRow, reason), sizeof(TrialTextRow::reason));
  add_string(type.id(), "output_tail", offsetof(TrialTextRow, output_tail), sizeof(TrialTextRow::output_tail));
  return type;
}

h5::Handle metric_name_type() {
  h5::Handle type = compound(sizeof(MetricNameRow));
  add_field(type.id(), "trial", offsetof(MetricNameRow, trial), H5T_NATIVE_INT64);
  add_string(type.id(), "name", offsetof(MetricNameRow, name), sizeof(MetricNameRow::name));
  return type;
}

h5::Handle metric_type() {
  h5::Handle type = compound(sizeof(MetricRow));
  add_field(type.id(), "trial", offsetof(MetricRow, trial), H5T_NATIVE_INT64);
  add_string(type.id(), "name", offsetof(MetricRow, name), sizeof(MetricRow::name));
  add_field(type.id(), "value", offsetof(MetricRow, value), H5T_NATIVE_DOUBLE);
  return type;
}

h5::Handle metric_trial_type() {
  h5::Handle type = compound(sizeof(MetricTrialRow));
  add_field(type.id(), "trial", offsetof(MetricTrialRow, trial), H5T_NATIVE_INT64);
  return type;
}

h5::Handle event_type() {
  h5::Handle type = compound(sizeof(EventRow));
  add_field(type.id(), "time", offsetof(EventRow, time), H5T_NATIVE_DOUBLE);
  add_string(type.id(), "kind", offsetof(EventRow, kind), sizeof(EventRow::kind));
  add_string(type.id(), "detail", offsetof(EventRow, detail), sizeof(EventRow::detail));
  return type;
}

bool is_continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

template <std::size_t N>
void copy_head(char (&field)[N], std::string_view text) {
  const std::string_view kept = utf8_head(text, N - 1);   // N - 1: room for the NUL
  std::memcpy(field, kept.data(), kept.size());
  field[kept.size()] = '\0';
}

template <std::size_t N>
std::string from_field(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}

}  // namespace

h5::Handle trial_status_type() { return status_type(); }

MemoryTypes make_memory_types() {
  return {candidate_type(), trial_type(), trial_key_type(), metric_type(),      metric_trial_type(),
          event_type(),     estimate_type(), confirmation_type(), metric_name_type(), proposal_type(),
          trial_outcome_type(), trial_text_type()};
}

h5::Handle make_file_type(hid_t memory_type) {
  h5::Handle type(FLOTILLA_H5(H5Tcopy(memory_type)));
  FLOTILLA_H5(H5Tpack(type.id()));
  return type;
}

std::string_view utf8_head(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;   // text[end] is the first byte dropped
  while (end > 0 && is_continuation(text[end])) --end;
  return text.substr(0, end);
}

std::string_view utf8_tail(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t begin = text.size() - max_bytes;   // text[begin] is the first byte kept
  while (begin < text.size() && is_continuation(text[begin])) ++begin;
  return text.substr(begin);
}

CandidateRow to_row(const CandidateRecord& record) {
  CandidateRow row{};   // zero-filled: unused string bytes compress and compare cleanly
  row.id = record.id;
  row.round = record.round;
  copy_head(row.config, record.config);
  copy_head(row.origin, record.origin);
  return row;
}

CandidateRecord from_row(const CandidateRow& row) {
  return {row.id, row.round, from_field(row.config), from_field(row.origin)};
}

TrialRow to_row(const TrialRecord& record) {
  TrialRow row{};
  row.candidate = record.candidate;
  row.kind = static_cast<std::int8_t>(record.kind);
  row.index = record.index;
  row.attempt = record.attempt;
  row.status = static_cast<std::int8_t>(record.status);
  row.start = record.start;
  row.end = record.end;
  row.exit_code = record.exit_code;
  row.objective = record.objective;
  copy_head(row.reason, record.reason);
  const std::string_view tail = utf8_tail(record.output_tail, sizeof(row.output_tail) - 1);
  std::memcpy(row.output_tail, tail.data(), tail.size());
  row.rank = record.rank;
  copy_head(row.host, record.host);
  copy_head(row.device, record.device);
  copy_head(row.cores, record.cores);
  copy_head(row.slurm_job, record.slurm_job);
  return row;
}

namespace {

// The fields a trial row and its outcome-only read (TrialOutcomeRow) have in common.
template <class Row>
TrialRecord outcome_fields(const Row& row) {
  TrialRecord record;
  record.candidate = row.candidate;
  record.kind = static_cast<TrialKind>(row.kind);
  record.index = row.index;
  record.attempt = row.attempt;
  record.status = static_cast<TrialStatus>(row.status);
  record.start = row.start;
  record.end = row.end;
  record.exit_code = row.exit_code;
  record.objective = row.objective;
  record.rank = row.rank;
  return record;
}

}  // namespace

TrialRecord from_row(const TrialRow& row) {
  TrialRecord record = outcome_fields(row);
  record.reason = from_field(row.reason);
  record.output_tail = from_field(row.output_tail);
  record.host = from_field(row.host);
  record.device = from_field(row.device);
  record.cores = from_field(row.cores);
  record.slurm_job = from_field(row.slurm_job);
  return record;
}

TrialRecord from_row(const TrialOutcomeRow& row) { return outcome_fields(row); }

void add_texts(TrialRecord& record, const TrialTextRow& row) {
  record.reason = from_field(row.reason);
  record.output_tail = from_field(row.output_tail);
}

MetricRow to_row(const Metric& metric, std::int64_t trial) {
  MetricRow row{};
  row.trial = trial;
  copy_head(row.name, metric.name);
  row.value = metric.value;
  return row;
}

EventRow to_row(const EventRecord& record) {
  EventRow row{};
  row.time = record.time;
  copy_head(row.kind, record.kind);
  copy_head(row.detail, record.detail);
  return row;
}

EventRecord from_row(const EventRow& row) {
  return {row.time, from_field(row.kind), from_field(row.detail)};
}

EstimateRow to_row(const EstimateRecord& r) {
  return {r.candidate, r.repeats, r.estimate, r.low, r.high, r.coverage, r.time};
}

EstimateRecord from_row(const EstimateRow& row) {
  return {row.candidate, row.repeats, row.estimate, row.low, row.high, row.coverage, row.time};
}

ConfirmationRow to_row(const ConfirmationRecord& r) {
  ConfirmationRow row{};
  row.candidate = r.candidate;
  row.reference = r.reference;
  // An unreliable verdict is stored as failed (its reason says why), so the file's enum stays
  // the one every earlier file has.
  auto verdict = stats::verdict_from_key(r.verdict).value_or(stats::Verdict::failed);
  if (verdict == stats::Verdict::unreliable) verdict = stats::Verdict::failed;
  row.verdict = static_cast<std::int8_t>(verdict);
  row.pairs = r.pairs;
  row.looks = r.looks;
  row.ratio = r.ratio;
  row.low = r.low;
  row.high = r.high;
  row.confidence = r.confidence;
  row.min_effect = r.min_effect;
  row.time = r.time;
  copy_head(row.reason, r.reason);
  return row;
}

ConfirmationRecord from_row(const ConfirmationRow& row) {
  ConfirmationRecord r;
  r.candidate = row.candidate;
  r.reference = row.reference;
  r.verdict = std::string(stats::verdict_key(static_cast<stats::Verdict>(row.verdict)));
  r.pairs = row.pairs;
  r.looks = row.looks;
  r.ratio = row.ratio;
  r.low = row.low;
  r.high = row.high;
  r.confidence = row.confidence;
  r.min_effect = row.min_effect;
  r.time = row.time;
  r.reason = from_field(row.reason);
  return r;
}

ProposalRow to_row(const ProposalRecord& record) {
  ProposalRow row{};
  row.round = record.round;
  row.proposer = record.proposer;
  row.parent = record.parent;
  row.hash = record.hash;
  row.status = static_cast<std::int8_t>(record.status);
  copy_head(row.name, record.name);
  copy_head(row.reason, record.reason);
  row.time = record.time;
  return row;
}

ProposalRecord from_row(const ProposalRow& row) {
  ProposalRecord r;
  r.round = row.round;
  r.proposer = row.proposer;
  r.parent = row.parent;
  r.hash = row.hash;
  r.status = static_cast<ProposalStatus>(row.status);
  r.name = from_field(row.name);
  r.reason = from_field(row.reason);
  r.time = row.time;
  return r;
}

}  // namespace flotilla::results::schema
