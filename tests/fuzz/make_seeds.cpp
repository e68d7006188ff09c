// make_seeds — writes the two HDF5 seeds that flotilla's own campaigns do not leave behind,
// with the writers the worker and results tests use (tests/worker/JobFileTest.cpp,
// tests/results/test_records.h):
//   job.h5    a worker job file: 2 ranks, 3 records (metrics, a failure with reason and output)
//   tests.h5  a schema-2 campaign file with every table: candidates, trials with metrics,
//             events, estimates, a confirmation, and a test suite with two candidates' outcomes;
//             its trials and metrics fill more than one chunk of 64 rows, so a reader unpacks
//             their chunks itself (results/src/Hdf5.cpp, read_rows) and the fuzzer reaches it
// Usage: make_seeds OUTPUT_DIR. FLOTILLA_FUZZ builds run it at build time into
// BUILD/tests/fuzz/h5_seeds (target fuzz_h5_seeds; *.h5 files are not committed), so the seeds
// always have the schema of the build's own writers.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "flotilla/results/JobFile.h"
#include "flotilla/results/Store.h"

using namespace flotilla::results;

namespace {

JobRecord job_record(std::uint64_t id, std::int32_t rank, std::vector<Metric> metrics) {
  JobRecord r;
  r.id = id;
  r.status = TrialStatus::ok;
  r.start = 100.0 + static_cast<double>(id);
  r.end = r.start + 0.5;
  r.objective = metrics.empty() ? std::nan("") : metrics.front().value;
  r.output_tail = "flotilla-metric: gflops=2.5\n";
  r.metrics = std::move(metrics);
  r.rank = rank;
  return r;
}

void write_job_file(const std::filesystem::path& path) {
  JobFileWriter out = JobFileWriter::create(path, {"job-1", 3, "head", 12.5, "0.1.0"});
  out.add_rank({1, "node1", "cpu", "0-1"});
  out.add_rank({2, "node2", "GPU-1", "2"});
  JobRecord failed = job_record(8, 2, {});
  failed.status = TrialStatus::failed;
  failed.exit_code = 3;
  failed.reason = "exit code 3";
  out.append(std::vector<JobRecord>{job_record(7, 1, {{"gflops", 2.5}, {"time_s", 0.25}}), failed});
  out.append(std::vector<JobRecord>{job_record(9, 1, {{"gflops", 1.5}})});
}

void write_campaign(const std::filesystem::path& path) {
  CampaignInfo info;
  info.name = "seed";
  info.config_text = "[campaign]\nname = seed\n[space]\nparam = tile: int: 8,16\n";
  info.fingerprint = "objective=gflops";
  info.objective = "gflops";
  info.direction = "maximize";
  info.repeats = 1;
  info.shards = 1;
  info.test_gate = "all_pass";
  info.seed = 7;
  info.flotilla_version = "0.1.0";
  info.host = "node01";
  info.created = 1700000000;
  info.confirm_max_pairs = 10;
  Store store = Store::create(path, info);
  for (std::int64_t id = 0; id < 2; ++id) {
    store.add_candidate({id, 0, id == 0 ? "tile=8" : "tile=16", id == 0 ? "baseline" : "grid"});
    TrialRecord explore{.candidate = id, .kind = TrialKind::explore, .start = 1.0, .end = 2.0};
    explore.objective = 1.0 + static_cast<double>(id);
    explore.metrics = {{"gflops", explore.objective}, {"time_s", 0.1}};
    explore.host = "node01";
    explore.device = "cpu";
    explore.cores = "0";
    store.add_trial(explore);
    TrialRecord evaluate{.candidate = id, .kind = TrialKind::evaluate, .start = 2.0, .end = 3.0};
    evaluate.status = id == 0 ? TrialStatus::ok : TrialStatus::failed;
    evaluate.objective = std::nan("");
    evaluate.reason = id == 0 ? "" : "test Suite.b failed";
    evaluate.output_tail = "[  FAILED  ] Suite.b\n";
    store.add_trial(evaluate);
    store.add_estimate({id, 1, explore.objective, explore.objective, explore.objective, 0.5, 3.0});
  }
  for (std::int32_t repeat = 1; repeat <= 36; ++repeat)  // 72 more explore trials: a second chunk
    for (std::int64_t id = 0; id < 2; ++id) {
      TrialRecord more{.candidate = id, .kind = TrialKind::explore, .index = repeat, .start = 2.0, .end = 2.5};
      more.objective = 1.0 + static_cast<double>(id) + 0.01 * repeat;
      more.metrics = {{"gflops", more.objective}};
      store.add_trial(more);
    }
  store.add_trial({.candidate = 1, .kind = TrialKind::confirm, .start = 4.0, .end = 5.0, .objective = 2.0});
  store.add_confirmation({1, 0, "faster", 12, 3, 2.0, 1.9, 2.1, 0.95, 0.02, 6.0, ""});
  store.add_event({1.0, "campaign_started", "{\"budget\": 1}"});
  store.add_event({6.0, "rolled_back", "candidate 1: test Suite.b failed"});
  const std::int64_t suite = store.add_test_suite({{"Suite.a", "Suite.b", "Suite.c"}});
  store.add_test_results({0, suite, {encode_outcome(TestOutcome::pass), encode_outcome(TestOutcome::pass),
                                     encode_outcome(TestOutcome::skip)}, {}, {}});
  store.add_test_results({1, suite,
                          {encode_outcome(TestOutcome::pass), encode_outcome(TestOutcome::fail, TestOutcome::fail),
                           encode_outcome(TestOutcome::fail, TestOutcome::pass)},
                          {quantise_duration(0.01), quantise_duration(1.5), quantise_duration(0.2)},
                          {{1, "expected 1, got 2"}, {2, "flaky"}}});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUTPUT_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / "job.h5");
  std::filesystem::remove(dir / "tests.h5");
  write_job_file(dir / "job.h5");
  write_campaign(dir / "tests.h5");
  std::printf("%s\n%s\n", (dir / "job.h5").c_str(), (dir / "tests.h5").c_str());
  return 0;
}
