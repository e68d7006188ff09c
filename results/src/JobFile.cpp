// JobFile.cpp — writing a worker job file (JobFile.h; layout in JobSchema.h).
//
// The writer keeps the sizes of /text and /metrics so that a record's offsets are known before
// anything is written; it is the file's only writer (WriterLock), so they cannot go stale. After
// a reopen they are the datasets' real sizes: bytes a killed writer left past its last row are
// simply never referred to. After a write fails half-way the writer refuses further writes.
#include <flotilla/results/JobFile.h>

#include "CampaignFile.h"
#include "Hdf5.h"
#include "JobSchema.h"
#include "WriterLock.h"

namespace flotilla::results {

using namespace job_schema;

struct JobFileWriter::Impl {
  std::filesystem::path m_path;
  WriterLock m_lock;  // before the handles: released only after the file is closed
  h5::Handle m_file;
  Tables m_tables;
  JobInfo m_info;
  hsize_t m_text_size = 0;
  hsize_t m_metric_count = 0;
  bool m_broken = false;
};

JobFileWriter::JobFileWriter(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
JobFileWriter::JobFileWriter(JobFileWriter&&) noexcept = default;
JobFileWriter& JobFileWriter::operator=(JobFileWriter&&) noexcept = default;
JobFileWriter::~JobFileWriter() = default;

JobFileWriter JobFileWriter::create(const std::filesystem::path& path, const JobInfo& info) {
  h5::init();
  auto impl = std::make_unique<Impl>();
  impl->m_path = path;
  impl->m_info = info;
  try {
    with_path(path, [&] {
      impl->m_file = file::create(path);
      impl->m_lock = WriterLock::acquire(path);
      write_header(impl->m_file.id(), info);
      impl->m_tables.create(impl->m_file.id());
      FLOTILLA_H5(H5Fstart_swmr_write(impl->m_file.id()));  // no new objects after this
    });
  } catch (...) {
    if (impl->m_file.valid()) {
      impl.reset();
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
    throw;
  }
  return JobFileWriter(std::move(impl));
}

JobFileWriter JobFileWriter::open_for_append(const std::filesystem::path& path) {
  h5::init();
  file::require_hdf5_file(path);
  auto impl = std::make_unique<Impl>();
  impl->m_path = path;
  impl->m_lock = WriterLock::acquire(path);
  with_path(path, [&] {
    impl->m_file = file::open_write(path);
    impl->m_info = read_header(impl->m_file.id(), path);
    impl->m_tables.open(impl->m_file.id());
    impl->m_text_size = h5::row_count(impl->m_tables.text.id());
    impl->m_metric_count = h5::row_count(impl->m_tables.metrics.id());
    FLOTILLA_H5(H5Fstart_swmr_write(impl->m_file.id()));
  });
  return JobFileWriter(std::move(impl));
}

const JobInfo& JobFileWriter::info() const { return m_impl->m_info; }

std::vector<std::pair<std::uint64_t, std::int32_t>> JobFileWriter::recorded() const {
  return with_path(m_impl->m_path, [&] {
    const auto rows = h5::read_table<KeyRow>(m_impl->m_tables.results.id(), m_impl->m_tables.types.key.id());
    std::vector<std::pair<std::uint64_t, std::int32_t>> keys;
    keys.reserve(rows.size());
    for (const auto& row : rows) keys.emplace_back(row.id, row.attempt);
    return keys;
  });
}

void JobFileWriter::add_rank(const RankRecord& rank) {
  if (m_impl->m_broken) throw StoreError(m_impl->m_path.string() + ": an earlier write failed");
  RankRow row{};
  row.rank = rank.rank;
  copy_head(row.host, rank.host);
  copy_head(row.device, rank.device);
  copy_head(row.cores, rank.cores);
  copy_head(row.slurm_job, rank.slurm_job);
  with_path(m_impl->m_path,
            [&] { h5::append_rows(m_impl->m_tables.ranks.id(), m_impl->m_tables.types.rank.id(), &row, 1); });
}

void JobFileWriter::append(std::span<const JobRecord> records) {
  Impl& impl = *m_impl;
  if (impl.m_broken) throw StoreError(impl.m_path.string() + ": an earlier write failed");
  if (records.empty()) return;
  std::string text;
  std::vector<MetricRow> metrics;
  std::vector<ResultRow> rows(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const JobRecord& record = records[i];
    ResultRow& row = rows[i];
    row = ResultRow{record.id,
                    record.attempt,
                    static_cast<std::int8_t>(record.status),
                    record.start,
                    record.end,
                    record.exit_code,
                    record.objective,
                    record.rank,
                    impl.m_text_size + text.size(),
                    static_cast<std::uint32_t>(record.reason.size()),
                    static_cast<std::uint32_t>(record.output_tail.size()),
                    impl.m_metric_count + metrics.size(),
                    static_cast<std::uint32_t>(record.metrics.size())};
    text += record.reason;
    text += record.output_tail;
    for (const Metric& metric : record.metrics) {
      MetricRow& out = metrics.emplace_back();
      copy_head(out.name, metric.name);
      out.value = metric.value;
    }
  }
  try {
    with_path(impl.m_path, [&] {
      // Text and metrics first: a row is the commit point of its record.
      if (!text.empty()) h5::append_rows(impl.m_tables.text.id(), H5T_NATIVE_UINT8, text.data(), text.size());
      if (!metrics.empty())
        h5::append_rows(impl.m_tables.metrics.id(), impl.m_tables.types.metric.id(), metrics.data(), metrics.size());
      h5::append_rows(impl.m_tables.results.id(), impl.m_tables.types.result.id(), rows.data(), rows.size());
    });
  } catch (...) {
    impl.m_broken = true;
    throw;
  }
  impl.m_text_size += text.size();
  impl.m_metric_count += metrics.size();
}

}  // namespace flotilla::results
