// test_records.h — deterministic records and a scratch directory, shared by results_test and
// the results_writer helper process, so that a test can predict exactly what a writer wrote.
#pragma once

#include <flotilla/results/Store.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>

namespace flotilla::results::testing {

inline CampaignInfo sample_campaign() {
  CampaignInfo info;
  info.name = "stencil-tuning";
  info.config_text = "[campaign]\nname = stencil-tuning\n[space]\ntile: int: 8,16,32\n";
  info.fingerprint = "objective=gflops direction=maximize repeats=3";
  info.objective = "gflops";
  info.direction = "maximize";
  info.repeats = 3;
  info.shards = 2;
  info.seed = 18446744073709551557ULL;   // above INT64_MAX: the attribute must be unsigned
  info.flotilla_version = "0.1.0";
  info.host = "node01";
  info.created = 1700000000.25;
  return info;
}

inline CandidateRecord sample_candidate(std::int64_t id) {
  return {id, static_cast<std::int32_t>(id / 4), "tile=" + std::to_string(8 << (id % 3)),
          id == 0 ? "baseline" : "grid"};
}

// Trial i belongs to candidate i / 2; (i / 2, i % 2) already makes every key distinct.
inline TrialRecord sample_trial(std::int64_t i) {
  TrialRecord t;
  t.candidate = i / 2;
  t.kind = i % 2 == 0 ? TrialKind::explore : TrialKind::evaluate;
  t.index = static_cast<std::int32_t>(i % 3);
  t.attempt = static_cast<std::int32_t>(i % 5 == 4);
  t.status = static_cast<TrialStatus>(i % 4);
  t.start = 1000.0 + static_cast<double>(i);
  t.end = t.start + 0.5;
  t.exit_code = t.status == TrialStatus::ok ? 0 : 1;
  t.objective = 1.5 * static_cast<double>(i);
  t.reason = t.status == TrialStatus::ok ? "" : "reason " + std::to_string(i);
  t.output_tail = "line one\ntrial " + std::to_string(i) + " done\n";
  t.metrics = {{"gflops", 2.0 * static_cast<double>(i)}, {"wall_s", static_cast<double>(i) + 0.25}};
  return t;
}

inline EventRecord sample_event(std::int64_t i) {
  return {2000.0 + static_cast<double>(i), "trial_recorded",
          "{\"trial\":" + std::to_string(i) + "}"};
}

// Appends trials [first, first + count), each with its candidate (when new) and an event.
inline void append_samples(Store& store, std::int64_t first, std::int64_t count) {
  for (std::int64_t i = first; i < first + count; ++i) {
    const TrialRecord trial = sample_trial(i);
    if (trial.candidate == static_cast<std::int64_t>(store.candidates().size())) {
      store.add_candidate(sample_candidate(trial.candidate));
    }
    store.add_trial(trial);
    store.add_event(sample_event(i));
  }
}

// The same records as append_samples, inside one Store::Group that the caller commits: it reads
// nothing back (a read would commit the group), so trial i's candidate is new exactly when
// i / 2 == (i + 1) / 2 candidates are recorded before it.
inline void append_samples_in_group(Store& store, std::int64_t first, std::int64_t count) {
  for (std::int64_t i = first; i < first + count; ++i) {
    const TrialRecord trial = sample_trial(i);
    if (trial.candidate == (i + 1) / 2) store.add_candidate(sample_candidate(trial.candidate));
    store.add_trial(trial);
    store.add_event(sample_event(i));
  }
}

// A fresh directory under the system temp dir, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    m_path = std::filesystem::temp_directory_path() /
             ("flotilla-results-test-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter++));
    std::filesystem::create_directories(m_path);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

 private:
  std::filesystem::path m_path;
};

// What a store call refused with, or "no error".
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const StoreError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace flotilla::results::testing
