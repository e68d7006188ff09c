// SlurmCommands.cpp — `flotilla status CAMPAIGN.ini` (the campaign's progress and its Slurm jobs),
// `flotilla cancel CAMPAIGN.ini` (cancels the campaign's pending and running jobs) and
// `flotilla sbatch CAMPAIGN.ini` (writes the next job's script for a person to submit).
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "Commands.h"
#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/JobPhase.h"
#include "flotilla/jobs/Programs.h"
#include "flotilla/jobs/SlurmSettings.h"
#include "flotilla/jobs/Slurm.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/results/History.h"
#include "flotilla/results/Printable.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Campaign.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::cli {
namespace {

struct CampaignJobs {
  scheduler::Settings settings;
  std::vector<jobs::JobDirectory> jobs;
  // Slurm's records of the jobs it still knows, by job (an array's elements under the array's id).
  std::map<std::uint32_t, std::vector<jobs::JobStatus>> states;
  bool reachable = false;
};

// The Slurm client the campaign's settings name (the Slurm backend's row read them).
std::string client_of(const scheduler::Settings& settings) { return jobs::slurm_settings(settings.backends).client; }

// Reads the settings and the job folders, and asks Slurm for every job's state in one query.
CampaignJobs load(const std::vector<std::string>& args, std::string_view usage) {
  if (args.empty()) throw std::invalid_argument(std::string(usage));
  CampaignJobs c{.settings = scheduler::load_settings(args[0], {args.begin() + 1, args.end()})};
  c.jobs = jobs::list_job_directories(c.settings.jobs_dir);
  // Build jobs (build.on = job) keep their folders apart, in JOBS_DIR/builds (BuildStage.h).
  for (auto& job : jobs::list_job_directories(c.settings.jobs_dir / "builds")) c.jobs.push_back(std::move(job));
  std::vector<std::uint32_t> ids;
  for (const auto& job : c.jobs)
    if (job.slurm_id) ids.push_back(job.slurm_id);
  if (ids.empty()) return c;
  try {
    for (auto& s : jobs::make_slurm_client(client_of(c.settings))->query(ids))
      c.states[s.array_job_id != 0 ? s.array_job_id : s.id].push_back(std::move(s));
    c.reachable = true;
  } catch (const std::exception& e) {
    std::cerr << "flotilla: cannot read job states from Slurm: " << e.what() << '\n';
  }
  return c;
}

jobs::JobView view_of(const CampaignJobs& c, const jobs::JobDirectory& job) {
  const auto it = c.states.find(job.slurm_id);
  return jobs::job_view(job, it == c.states.end() ? std::vector<jobs::JobStatus>() : it->second, c.reachable);
}

// Appends `cancelled` to a job's journal unless it is already final or not a journal. A folder
// without one (submitted by hand, or by an older flotilla) gets its submission first, naming the
// job as every journal does (JobPhase.h).
void journal_cancelled(const std::filesystem::path& dir, std::uint32_t id) {
  try {
    auto replay = jobs::read_job_journal(dir);
    const auto phase = replay ? replay->phase : jobs::JobPhase::queued;
    if (jobs::is_final(phase)) return;
    if (!replay)
      jobs::append_job_event(dir, jobs::JobEvent::submitted, jobs::JobPhase::queued,
                             fmt::format("Slurm job {}, found by flotilla cancel", id));
    jobs::append_job_event(dir, jobs::JobEvent::cancelled, jobs::next(phase, jobs::JobEvent::cancelled),
                           "cancelled by `flotilla cancel`");
  } catch (const std::exception& e) {
    std::cerr << "flotilla: " << e.what() << " (the job is cancelled; its journal is not updated)\n";
  }
}

}  // namespace

int status_command(const std::vector<std::string>& args) {
  auto c = load(args, "usage: flotilla status CAMPAIGN.ini [--section.key=VALUE ...]");
  const auto& results = c.settings.results;
  std::string out;
  if (std::filesystem::exists(results)) {
    const auto store = results::Store::open_read(results);
    auto summary = results::summarize(store);
    out += results::summary_text(summary, 3);
    // Whether a run is at work now, finished, or stopped (and how): `results summary`'s note.
    const auto run = results::run_status(store.events(), summary, results::has_live_writer(results));
    out += fmt::format("run        {}{}\n", results::to_string(run.state), run.complete() ? "" : " · " + run.note());
  } else {
    out += fmt::format("campaign   {}: not started ({} does not exist)\n", c.settings.name, results.string());
  }
  if (c.jobs.empty()) {
    out += fmt::format("\nno Slurm jobs in {}\n", c.settings.jobs_dir.string());
  } else {
    // state: Slurm's word now; phase: the last the campaign's journal of the job says (JobPhase.h),
    // or done / ended where Slurm saw the job end and no run has journalled it yet (job_view).
    out += fmt::format("\nSlurm jobs ({})\n  {:>8}  {:<28}  {:<24}  {:<9}  {:>5}  {:>7}\n",
                       c.settings.jobs_dir.string(), "job id", "name", "state", "phase", "tasks", "results");
    for (const auto& job : c.jobs) {
      const auto view = view_of(c, job);
      out += fmt::format("  {:>8}  {:<28}  {:<24}  {:<9}  {:>5}  {:>7}\n", job.slurm_id, job.name, view.state,
                         view.phase, job.tasks, job.results);
    }
  }
  // The summary quotes task output, and the rest comes from files and Slurm: shown escaped.
  std::cout << results::printable(out);
  return 0;
}

int cancel_command(const std::vector<std::string>& args) {
  auto c = load(args, "usage: flotilla cancel CAMPAIGN.ini [--section.key=VALUE ...]");
  // First the stop request, so a live run resubmits nothing of what is cancelled below.
  if (results::has_live_writer(c.settings.results)) {
    const auto request = scheduler::stop_request_path(c.settings);
    std::ofstream(request) << fmt::format("stop requested by `flotilla cancel` (pid {})\n", ::getpid());
    std::cout << fmt::format("asked the running campaign to stop ({}): it resubmits nothing and exits {}\n",
                             request.string(), scheduler::kExitCancelled);
  }
  if (!c.reachable && !c.jobs.empty()) return 1;
  // A live run journals what it cancels itself; without one, the jobs' journals say it here, so
  // the next run knows they ended without asking Slurm.
  const bool live = results::has_live_writer(c.settings.results);
  std::map<std::uint32_t, std::filesystem::path> dirs;
  for (const auto& job : c.jobs) dirs[job.slurm_id] = job.dir;
  std::unique_ptr<jobs::SlurmClient> client;  // only for a campaign with Slurm jobs
  int cancelled = 0;
  for (const auto& [job, records] : c.states) {
    for (const auto& status : records) {  // each element of an array, by its own id, as Slurm lists them
      if (jobs::is_terminal(status.state)) continue;
      if (!client) client = jobs::make_slurm_client(client_of(c.settings));
      client->cancel(status.id);
      std::cout << fmt::format("cancelled Slurm job {} ({})\n", status.id, jobs::to_string(status.state));
      if (auto dir = dirs.find(status.id); !live && dir != dirs.end()) journal_cancelled(dir->second, status.id);
      ++cancelled;
    }
  }
  std::cout << fmt::format("{} job(s) cancelled; recorded results are kept, and `flotilla run` resumes the rest\n",
                           cancelled);
  return 0;
}

// Started by the Slurm backend (resources.slurm_start = allocate) for a job it allocated at once:
// starts the launcher (`run-allocation --launcher`), a process of its own session that outlives
// flotilla, runs the job folder's script in that allocation and releases the allocation when the
// script ends (jobs::start_allocation_launcher, jobs::run_allocation_launcher).
int run_allocation_command(const std::vector<std::string>& args) {
  constexpr std::string_view usage =
      "usage: flotilla run-allocation [--launcher] JOB_ID JOB_DIR\n"
      "  (internal) runs JOB_DIR/job.sh inside Slurm allocation JOB_ID, detached, and releases the allocation\n"
      "  with the script's exit status when it ends; the Slurm backend starts it with resources.slurm_start = allocate.\n"
      "  --launcher: be that detached process (run-allocation without it starts it and returns once it runs)";
  const bool launcher = !args.empty() && args[0] == "--launcher";
  const std::vector<std::string> rest(args.begin() + (launcher ? 1 : 0), args.end());
  if (rest.size() != 2) throw std::invalid_argument(std::string(usage));
  std::uint32_t id = 0;
  auto [end, ec] = std::from_chars(rest[0].data(), rest[0].data() + rest[0].size(), id);
  if (ec != std::errc() || end != rest[0].data() + rest[0].size() || id == 0)
    throw std::invalid_argument(fmt::format("JOB_ID '{}' is not a Slurm job id\n{}", rest[0], usage));
  const auto dir = std::filesystem::absolute(rest[1]);
  if (launcher) return jobs::run_allocation_launcher(id, dir);
  return jobs::start_allocation_launcher(
      id, dir, {jobs::self_executable().string(), "run-allocation", "--launcher", rest[0], dir.string()});
}

// Runs the campaign on the Slurm backend in hold mode: it records what it would record before
// submitting (the campaign file, the round's candidates), writes the next job's folder and stops.
// The next `flotilla run` finds the job by its name (the folder's name) or by the slurm_job_id
// file its script writes, follows it while it runs and takes its results.
int sbatch_command(const std::vector<std::string>& args) {
  constexpr std::string_view usage = "usage: flotilla sbatch CAMPAIGN.ini [--section.key=VALUE ...]";
  if (args.empty()) throw std::invalid_argument(std::string(usage));
  std::vector<std::string> overrides(args.begin() + 1, args.end());
  overrides.push_back("--resources.backend=slurm");
  auto settings = scheduler::load_settings(args[0], overrides);
  if (settings.staged)
    throw scheduler::ConfigError(fmt::format(
        "{}: [intent] stages = bottleneck: a staged campaign decides each stage from the last one's results, so it "
        "cannot be written as held jobs; run it with `flotilla run`, or give --intent.stages=none",
        args[0]));
  // The backend holds the job it wrote, and the campaign stops there: a value, kExitHeld.
  std::optional<jobs::HeldJob> held;
  const int code = scheduler::run_campaign(
      settings,
      {.path_prepend = {jobs::install_dir()}, .live_progress = false, .hold_jobs = true,
       .on_held = [&](const jobs::HeldJob& job) { held = job; }},
      std::cout, std::cerr);
  if (code != scheduler::kExitHeld || !held) {
    std::cout << "nothing left to submit: the campaign is complete\n";
    return code;
  }
  auto script = (held->dir / "job.sh").string();
  std::cout << fmt::format("{} {} ({} tasks, manifest {})\n",
                           held->already_written ? "already written, not submitted yet:" : "wrote", script, held->tasks,
                           (held->dir / "manifest.json").string());
  // Commands to paste into a shell: a file name like 'we ird$(id).ini' must stay one word and run nothing.
  std::vector<std::string> words;
  for (const auto& arg : args) words.push_back(jobs::shell_quote(arg));
  std::cout << results::printable(
      fmt::format("submit it with:  sbatch {}\nthen `flotilla run {}` follows the job and records its results\n",
                  jobs::shell_quote(script), fmt::join(words, " ")));
  return 0;
}

}  // namespace flotilla::cli
