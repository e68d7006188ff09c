// JobSchema.cpp — compound types of the job file's tables.
#include "JobSchema.h"

#include <cstddef>

#ifndef FLOTILLA_VERSION
#error "FLOTILLA_VERSION must be defined by the build (results/CMakeLists.txt)"
#endif

#include "Schema.h"

namespace flotilla::results::job_schema {
namespace {

void add_field(hid_t compound, const char* name, std::size_t offset, hid_t type) {
  FLOTILLA_H5(H5Tinsert(compound, name, offset, type));
}

void add_string(hid_t compound, const char* name, std::size_t offset, std::size_t size) {
  h5::Handle type = h5::string_type(size);
  add_field(compound, name, offset, type.id());
}

h5::Handle compound(std::size_t size) { return h5::Handle(FLOTILLA_H5(H5Tcreate(H5T_COMPOUND, size))); }

template <class Row>
void add_key(hid_t type) {
  add_field(type, "id", offsetof(Row, id), H5T_NATIVE_UINT64);
  add_field(type, "attempt", offsetof(Row, attempt), H5T_NATIVE_INT32);
}

h5::Handle result_type() {
  h5::Handle type = compound(sizeof(ResultRow));
  const hid_t id = type.id();
  add_key<ResultRow>(id);
  add_field(id, "status", offsetof(ResultRow, status), schema::trial_status_type().id());
  add_field(id, "start", offsetof(ResultRow, start), H5T_NATIVE_DOUBLE);
  add_field(id, "end", offsetof(ResultRow, end), H5T_NATIVE_DOUBLE);
  add_field(id, "exit_code", offsetof(ResultRow, exit_code), H5T_NATIVE_INT32);
  add_field(id, "objective", offsetof(ResultRow, objective), H5T_NATIVE_DOUBLE);
  add_field(id, "rank", offsetof(ResultRow, rank), H5T_NATIVE_INT32);
  add_field(id, "text_begin", offsetof(ResultRow, text_begin), H5T_NATIVE_UINT64);
  add_field(id, "reason_size", offsetof(ResultRow, reason_size), H5T_NATIVE_UINT32);
  add_field(id, "tail_size", offsetof(ResultRow, tail_size), H5T_NATIVE_UINT32);
  add_field(id, "metrics_begin", offsetof(ResultRow, metrics_begin), H5T_NATIVE_UINT64);
  add_field(id, "metrics_count", offsetof(ResultRow, metrics_count), H5T_NATIVE_UINT32);
  return type;
}

h5::Handle key_type() {
  h5::Handle type = compound(sizeof(KeyRow));
  add_key<KeyRow>(type.id());
  return type;
}

h5::Handle metric_type() {
  h5::Handle type = compound(sizeof(MetricRow));
  add_string(type.id(), "name", offsetof(MetricRow, name), sizeof(MetricRow::name));
  add_field(type.id(), "value", offsetof(MetricRow, value), H5T_NATIVE_DOUBLE);
  return type;
}

h5::Handle rank_type() {
  h5::Handle type = compound(sizeof(RankRow));
  add_field(type.id(), "rank", offsetof(RankRow, rank), H5T_NATIVE_INT32);
  add_string(type.id(), "host", offsetof(RankRow, host), sizeof(RankRow::host));
  add_string(type.id(), "device", offsetof(RankRow, device), sizeof(RankRow::device));
  add_string(type.id(), "cores", offsetof(RankRow, cores), sizeof(RankRow::cores));
  add_string(type.id(), "slurm_job", offsetof(RankRow, slurm_job), sizeof(RankRow::slurm_job));
  return type;
}

}  // namespace

Types make_types() { return {result_type(), key_type(), metric_type(), rank_type()}; }

void Tables::create(hid_t file) {
  types = make_types();
  // Not compressed: a job file lives until it is ingested, and deflating every append would
  // cost rank 0 more time than dispatching the tasks (about 2.6 us a record, measured).
  const auto table = [&](const char* name, hid_t memory_type, hsize_t chunk) {
    h5::Handle file_type = schema::make_file_type(memory_type);
    return h5::create_table(file, name, file_type.id(), chunk, 0);
  };
  ranks = table(kRanks, types.rank.id(), 64);
  results = table(kResults, types.result.id(), 1024);
  metrics = table(kMetrics, types.metric.id(), 1024);
  text = h5::create_table(file, kText, H5T_STD_U8LE, 64 * 1024, 0);
}

void Tables::open(hid_t file) {
  types = make_types();
  const auto dataset = [&](const char* name) { return h5::Handle(FLOTILLA_H5(H5Dopen2(file, name, H5P_DEFAULT))); };
  ranks = dataset(kRanks);
  results = dataset(kResults);
  metrics = dataset(kMetrics);
  text = dataset(kText);
}

void write_header(hid_t file, const JobInfo& info) {
  h5::write_attribute(file, kSchemaAttribute, std::int32_t{kJobSchemaVersion});
  h5::write_attribute(file, "flotilla_version", std::string(FLOTILLA_VERSION));
  h5::Handle group(FLOTILLA_H5(H5Gcreate2(file, kGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  h5::write_attribute(group.id(), "name", info.name);
  h5::write_attribute(group.id(), "tasks", std::uint64_t{info.tasks});
  h5::write_attribute(group.id(), "host", info.host);
  h5::write_attribute(group.id(), "created", info.created);
  h5::write_attribute(group.id(), "flotilla_version",
                      info.flotilla_version.empty() ? std::string(FLOTILLA_VERSION) : info.flotilla_version);
}

JobInfo read_header(hid_t file, const std::filesystem::path& path) {
  if (!h5::has_attribute(file, kSchemaAttribute))
    throw StoreError(path.string() + ": not a flotilla job file (no '" + kSchemaAttribute + "' attribute on /)");
  const long long version = h5::read_int_attribute(file, kSchemaAttribute);
  if (version != kJobSchemaVersion)
    throw StoreError(path.string() + ": job file schema version " + std::to_string(version) +
                     " is not supported by flotilla " FLOTILLA_VERSION);
  h5::Handle group(FLOTILLA_H5(H5Gopen2(file, kGroup, H5P_DEFAULT)));
  return JobInfo{h5::read_string_attribute(group.id(), "name"), h5::read_uint_attribute(group.id(), "tasks"),
                 h5::read_string_attribute(group.id(), "host"), h5::read_double_attribute(group.id(), "created"),
                 h5::read_string_attribute(group.id(), "flotilla_version")};
}

}  // namespace flotilla::results::job_schema
