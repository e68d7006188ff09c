// Backends.cpp — a campaign's backends and strategy, from its settings (Runner.h).
#include <filesystem>

#include <fmt/format.h>

#include "flotilla/results/Analysis.h"
#include "flotilla/scheduler/Planning.h"
#include "Runner.h"

namespace flotilla::scheduler {

std::string campaign_tag(const Settings& s) { return std::filesystem::absolute(s.results).string(); }

std::unique_ptr<jobs::Backend> make_campaign_backend(const Settings& s, const RunOptions& o, Notice notice) {
  jobs::SlurmResources slurm{.client = s.slurm.client, .shape = s.slurm.explore,
                             .stages = {{"explore", s.slurm.explore}, {"evaluate", s.slurm.evaluate}},
                             .workdir = s.slurm.jobs_dir, .job_prefix = s.name, .max_attempts = s.max_attempts,
                             .max_submit_jobs = s.slurm.max_submit_jobs, .hold = o.hold_jobs,
                             .start = s.slurm.start, .setup = s.slurm.setup,
                             .launcher = s.slurm.launcher, .srun_mpi = s.slurm.srun_mpi};
  const auto make = o.make_backend ? o.make_backend : [](const jobs::BackendOptions& b) { return jobs::make_backend(b); };
  return make({.name = s.backend, .slots = s.slots, .pin = s.pin, .ranks = s.ranks, .path_prepend = o.path_prepend,
               .jobs_dir = s.slurm.jobs_dir, .campaign_tag = campaign_tag(s), .slurm = std::move(slurm),
               .notice = std::move(notice)});
}

// Where builds run (BuildStage.h): Slurm jobs of their own on [resources.build], in
// JOBS_DIR/builds (build.on = job), or processes on this host, build.parallel at a time.
BuildStage::BackendFactory make_build_backend_factory(const Settings& s, const RunOptions& o, Notice notice) {
  if (s.build_jobs) {
    jobs::SlurmResources slurm{.client = s.slurm.client, .shape = s.slurm.build, .stages = {{"build", s.slurm.build}},
                               .workdir = s.slurm.jobs_dir / "builds", .job_prefix = s.name + "-build",
                               .max_attempts = s.max_attempts, .max_submit_jobs = s.slurm.max_submit_jobs,
                               .hold = o.hold_jobs, .start = "batch", .setup = s.slurm.setup,
                               .launcher = s.slurm.launcher, .srun_mpi = s.slurm.srun_mpi};
    return [slurm, path_prepend = o.path_prepend, notice = std::move(notice)] {
      return jobs::make_backend({.name = "slurm", .path_prepend = path_prepend, .slurm = slurm, .notice = notice});
    };
  }
  return [slots = s.build_parallel, path_prepend = o.path_prepend, tag = campaign_tag(s)] {
    return jobs::make_backend(
        {.name = "local", .slots = slots, .pin = false, .path_prepend = path_prepend, .campaign_tag = tag});
  };
}

std::unique_ptr<search::Strategy> make_campaign_strategy(const Settings& s, std::string& note) {
  search::StrategyOptions options{.name = s.strategy, .seed = s.seed, .maximize = s.maximize, .fidelity = s.fidelity};
  for (const auto& goal : s.objectives) options.maximize_objectives.push_back(goal.maximize);
  if (!s.warm_start.empty()) {
    const auto file = s.warm_start.string();
    results::CampaignSummary other;
    try {
      other = results::summarize(results::Store::open_read(s.warm_start));
    } catch (const results::StoreError& e) {
      throw ConfigError(fmt::format("[search] warm_start: {}", e.what()));
    }
    auto warm = warm_start_from(other, s, file);
    note = fmt::format("warm start: {} outcomes of {} given to the strategy as advice ({} failed{})",
                       warm.observations.size(), file, warm.failed,
                       warm.off_space > 0 ? fmt::format("; {} not configurations of this space, e.g. {}", warm.off_space,
                                                        warm.first_off_space)
                                          : std::string());
    options.warm_start = std::move(warm.observations);
  }
  return search::make_strategy(options, s.space);
}

}  // namespace flotilla::scheduler
