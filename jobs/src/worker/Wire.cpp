// Wire.cpp — little-endian-as-the-host fixed-width fields and length-prefixed strings. Ranks of
// one job run the same binary on the same architecture, so no byte swapping is needed.
#include "Wire.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace flotilla::jobs::wire {
namespace {

class Writer {
 public:
  template <class T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    m_bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put(std::string_view text) {
    put(static_cast<std::uint32_t>(text.size()));
    m_bytes.append(text);
  }
  std::string take() { return std::move(m_bytes); }

 private:
  std::string m_bytes;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : m_bytes(bytes) {}
  template <class T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }
  std::string text() { return std::string(take(get<std::uint32_t>())); }
  void finish() const {
    if (!m_bytes.empty()) throw WireError(std::to_string(m_bytes.size()) + " unexpected bytes at the end of a message");
  }

 private:
  std::string_view take(std::size_t size) {
    if (size > m_bytes.size())
      throw WireError("message too short: wanted " + std::to_string(size) + " more bytes, " +
                      std::to_string(m_bytes.size()) + " left");
    const std::string_view part = m_bytes.substr(0, size);
    m_bytes.remove_prefix(size);
    return part;
  }
  std::string_view m_bytes;
};

}  // namespace

std::string encode(const Hello& hello) {
  Writer out;
  out.put(std::string_view(hello.host));
  out.put(std::string_view(hello.device));
  out.put(std::string_view(hello.cores));
  out.put(std::string_view(hello.slurm_job));
  return out.take();
}

std::string encode(const Batch& batch) {
  Writer out;
  out.put(batch.begin);
  out.put(batch.end);
  return out.take();
}

std::string encode(const Results& results) {
  Writer out;
  out.put(results.busy_seconds);
  out.put(static_cast<std::uint32_t>(results.records.size()));
  for (const auto& r : results.records) {
    out.put(r.id);
    out.put(r.attempt);
    out.put(static_cast<std::int8_t>(r.status));
    out.put(r.start);
    out.put(r.end);
    out.put(r.exit_code);
    out.put(r.objective);
    out.put(std::string_view(r.reason));
    out.put(std::string_view(r.output_tail));
    out.put(static_cast<std::uint32_t>(r.metrics.size()));
    for (const auto& metric : r.metrics) {
      out.put(std::string_view(metric.name));
      out.put(metric.value);
    }
  }
  return out.take();
}

Hello decode_hello(std::string_view bytes) {
  Reader in(bytes);
  Hello hello;
  hello.host = in.text();
  hello.device = in.text();
  hello.cores = in.text();
  hello.slurm_job = in.text();
  in.finish();
  return hello;
}

Batch decode_batch(std::string_view bytes) {
  Reader in(bytes);
  Batch batch;
  batch.begin = in.get<std::uint64_t>();
  batch.end = in.get<std::uint64_t>();
  in.finish();
  if (batch.end < batch.begin) throw WireError("batch ends before it begins");
  return batch;
}

Results decode_results(std::string_view bytes) {
  Reader in(bytes);
  Results results;
  results.busy_seconds = in.get<double>();
  const auto count = in.get<std::uint32_t>();
  results.records.reserve(std::min<std::size_t>(count, bytes.size()));  // a lying count cannot make us allocate much
  for (std::uint32_t i = 0; i < count; ++i) {
    results::JobRecord& r = results.records.emplace_back();
    r.id = in.get<std::uint64_t>();
    r.attempt = in.get<std::int32_t>();
    r.status = static_cast<results::TrialStatus>(in.get<std::int8_t>());
    r.start = in.get<double>();
    r.end = in.get<double>();
    r.exit_code = in.get<std::int32_t>();
    r.objective = in.get<double>();
    r.reason = in.text();
    r.output_tail = in.text();
    const auto metrics = in.get<std::uint32_t>();
    for (std::uint32_t m = 0; m < metrics; ++m) {
      std::string name = in.text();
      r.metrics.push_back({std::move(name), in.get<double>()});
    }
  }
  in.finish();
  return results;
}

}  // namespace flotilla::jobs::wire
