// Campaign.h — runs one campaign: intent file -> batches -> [build] -> explore -> gate -> evaluate ->
// verified winner, every result appended to the campaign's HDF5 file as it completes.
//
// Invariants:
//  - A task result is recorded (and flushed) before anything is decided from it.
//  - Running the same campaign again resumes: recorded tasks are never re-run, recorded
//    candidates are replayed to the strategy in order, so the next batch is the one an
//    uninterrupted run would have proposed. A changed setting that recorded results depend on
//    (Settings::fingerprint) is refused, naming the setting.
//  - A candidate that fails any evaluate shard is rolled back: never selected, reported with the
//    failing shard; the search goes on from the best verified candidate.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <iosfwd>
#include <vector>

#include "flotilla/jobs/Backend.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

struct RunOptions {
  std::vector<std::filesystem::path> path_prepend;  // where flotilla-kernel and friends live
  bool live_progress = true;                        // a \r-updated line (for terminals)
  // The backend writes the next job's folder instead of submitting it, and the campaign stops
  // there (kExitHeld); `on_held` is told which job (`flotilla sbatch`).
  bool hold_jobs = false;
  std::function<void(const jobs::HeldJob&)> on_held;
  // On SIGINT/SIGTERM, jobs of a backend whose work outlives the scheduler (Slurm) are left
  // running and re-attached by the next run; with this set, they are cancelled instead.
  bool cancel_on_interrupt = false;
  // Makes the backend instead of jobs::make_backend (tests inject a fault-injecting one).
  std::function<std::unique_ptr<jobs::Backend>(const jobs::BackendOptions&)> make_backend;
};

// Exit codes of `flotilla run`.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitNothingVerified = 3;
inline constexpr int kExitCancelled = 4;     // stopped by `flotilla cancel` (a stop request)
inline constexpr int kExitHeld = 5;          // hold_jobs: a job was written, not submitted (on_held)
inline constexpr int kExitInterrupted = 130;

// Runs or resumes the campaign; prints progress on stderr and the report on stdout. Returns an
// exit code above: how it ended is a value, kExitHeld included. Throws ConfigError or
// results::StoreError for bad setup.
int run_campaign(const Settings& settings, const RunOptions& options, std::ostream& out, std::ostream& err);

// Runs or resumes a staged campaign ([intent] stages = bottleneck, Stages.h): stage 0 profiles the
// baseline (RESULTS.stage0.h5, the baseline only); stage K (RESULTS.stageK.h5) is run_campaign
// over the space with every parameter outside the chosen component pinned to the incumbent's
// value, the incumbent as its baseline, and search.budget candidates. The best verified candidate
// of a stage is the next incumbent (the incumbent itself when nothing beats it), and its explore
// trials' share metrics are the next profile. `load` gives a fresh copy of the settings (Settings
// is not copyable). Re-running resumes: complete stage files finish at once.
int run_staged_campaign(const std::function<Settings()>& load, const RunOptions& options, std::ostream& out,
                        std::ostream& err);

// Asks a running campaign to stop after recording what has finished (SIGINT/SIGTERM handlers).
void request_stop();

// `flotilla cancel` asks a live run to stop by creating this file (RESULTS.stop) before it
// cancels the campaign's jobs: the run then resubmits nothing, and ends with kExitCancelled.
// A file left from a request no run obeyed is removed when the next run starts.
std::filesystem::path stop_request_path(const Settings& settings);

}  // namespace flotilla::scheduler
