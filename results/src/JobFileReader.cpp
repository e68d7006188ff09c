// JobFileReader.cpp — reading a worker job file, also while it is written (JobFile.h).
//
// Rows are read before what they refer to: a row's text and metrics were flushed before it, so
// every row read finds them; text and metrics of rows appended in between are not read yet.
#include <flotilla/results/JobFile.h>

#include <algorithm>
#include <map>

#include "CampaignFile.h"
#include "Hdf5.h"
#include "JobSchema.h"

namespace flotilla::results {

using namespace job_schema;

namespace {

template <class Row>
std::vector<Row> read_range(hid_t dataset, hid_t type, hsize_t begin, hsize_t end) {
  std::vector<Row> rows(end > begin ? end - begin : 0);
  if (!rows.empty()) h5::read_rows(dataset, type, rows.data(), rows.size(), begin);
  return rows;
}

}  // namespace

struct JobFileReader::Impl {
  std::filesystem::path m_path;
  h5::Handle m_file;
  bool m_swmr = false;
  Tables m_tables;
  JobInfo m_info;
  hsize_t m_seen = 0;

  void refresh(const h5::Handle& dataset) const {
    if (m_swmr) FLOTILLA_H5(H5Drefresh(dataset.id()));
  }
};

JobFileReader::JobFileReader(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
JobFileReader::JobFileReader(JobFileReader&&) noexcept = default;
JobFileReader& JobFileReader::operator=(JobFileReader&&) noexcept = default;
JobFileReader::~JobFileReader() = default;

JobFileReader JobFileReader::open(const std::filesystem::path& path) {
  h5::init();
  file::require_hdf5_file(path);
  auto impl = std::make_unique<Impl>();
  impl->m_path = path;
  with_path(path, [&] {
    impl->m_file = file::open_read(path, impl->m_swmr);
    impl->m_info = read_header(impl->m_file.id(), path);
    impl->m_tables.open(impl->m_file.id());
  });
  return JobFileReader(std::move(impl));
}

const JobInfo& JobFileReader::info() const { return m_impl->m_info; }

std::vector<RankRecord> JobFileReader::ranks() const {
  return with_path(m_impl->m_path, [&] {
    m_impl->refresh(m_impl->m_tables.ranks);
    std::vector<RankRecord> ranks;
    for (const auto& row : h5::read_table<RankRow>(m_impl->m_tables.ranks.id(), m_impl->m_tables.types.rank.id()))
      ranks.push_back({row.rank, from_field(row.host), from_field(row.device), from_field(row.cores),
                       from_field(row.slurm_job)});
    return ranks;
  });
}

std::vector<JobRecord> JobFileReader::read_new() {
  Impl& impl = *m_impl;
  const Tables& t = impl.m_tables;
  return with_path(impl.m_path, [&] {
    // Rows before what they refer to: text and metrics were flushed before their rows.
    impl.refresh(t.results);
    const auto rows =
        read_range<ResultRow>(t.results.id(), t.types.result.id(), impl.m_seen, h5::row_count(t.results.id()));
    if (rows.empty()) return std::vector<JobRecord>{};
    std::uint64_t text_begin = UINT64_MAX, text_end = 0, metric_begin = UINT64_MAX, metric_end = 0;
    for (const auto& row : rows) {
      text_begin = std::min(text_begin, row.text_begin);
      text_end = std::max<std::uint64_t>(text_end, row.text_begin + row.reason_size + row.tail_size);
      metric_begin = std::min(metric_begin, row.metrics_begin);
      metric_end = std::max<std::uint64_t>(metric_end, row.metrics_begin + row.metrics_count);
    }
    impl.refresh(t.text);
    const auto text = read_range<std::uint8_t>(t.text.id(), H5T_NATIVE_UINT8, text_begin, text_end);
    impl.refresh(t.metrics);
    const auto metrics = read_range<MetricRow>(t.metrics.id(), t.types.metric.id(), metric_begin, metric_end);
    std::map<std::int32_t, RankRecord> where;
    for (auto& rank : ranks()) where[rank.rank] = std::move(rank);
    std::vector<JobRecord> records;
    records.reserve(rows.size());
    for (const auto& row : rows) {
      JobRecord& r = records.emplace_back();
      r = JobRecord{row.id,        row.attempt,  static_cast<TrialStatus>(row.status), row.start, row.end,
                    row.exit_code, row.objective};
      if (row.reason_size + row.tail_size > 0) {
        const char* chars = reinterpret_cast<const char*>(text.data()) + (row.text_begin - text_begin);
        r.reason.assign(chars, row.reason_size);
        r.output_tail.assign(chars + row.reason_size, row.tail_size);
      }
      for (std::uint32_t m = 0; m < row.metrics_count; ++m) {
        const auto& metric = metrics[row.metrics_begin - metric_begin + m];
        r.metrics.push_back({from_field(metric.name), metric.value});
      }
      r.rank = row.rank;
      if (auto it = where.find(row.rank); it != where.end()) {
        r.host = it->second.host;
        r.device = it->second.device;
        r.cores = it->second.cores;
        r.slurm_job = it->second.slurm_job;
      }
    }
    impl.m_seen += rows.size();
    return records;
  });
}

JobFileContents read_job_file(const std::filesystem::path& path) {
  JobFileReader reader = JobFileReader::open(path);
  JobFileContents contents{reader.info(), reader.ranks(), {}};
  contents.records = reader.read_new();
  return contents;
}

}  // namespace flotilla::results
