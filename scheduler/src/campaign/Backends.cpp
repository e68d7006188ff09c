// Backends.cpp — a campaign's backends and strategy, from its settings (Runner.h).
#include <filesystem>

#include <fmt/format.h>

#include "flotilla/results/Analysis.h"
#include "flotilla/scheduler/Planning.h"
#include "Runner.h"

namespace flotilla::scheduler {

std::string campaign_tag(const Settings& s) { return std::filesystem::absolute(s.results).string(); }

// The campaign's backend runs the explore and evaluate stages' tasks, with its own settings as its
// registry row read them (Settings::backends): the scheduler names stages, never a backend.
std::unique_ptr<jobs::Backend> make_campaign_backend(const Settings& s, const RunOptions& o, Notice notice) {
  const auto make = o.make_backend ? o.make_backend : [](const jobs::BackendOptions& b) { return jobs::make_backend(b); };
  return make({.name = s.backend, .config = s.backends.find(s.backend), .stages = {"explore", "evaluate"},
               .slots = s.slots, .pin = s.pin, .ranks = s.ranks, .path_prepend = o.path_prepend, .jobs_dir = s.jobs_dir,
               .job_prefix = s.name, .max_attempts = s.max_attempts, .hold = o.hold_jobs,
               .campaign_tag = campaign_tag(s), .notice = std::move(notice)});
}

// Where builds run (BuildStage.h): jobs of their own on the campaign's backend, made for the stage
// "build", in JOBS_DIR/builds (build.on = job, a backend that can: BackendCapabilities::build_jobs),
// or processes on this host, build.parallel at a time.
BuildStage::BackendFactory make_build_backend_factory(const Settings& s, const RunOptions& o, Notice notice) {
  if (s.build_jobs) {
    jobs::BackendOptions options{.name = s.backend, .config = s.backends.find(s.backend), .stages = {"build"},
                                 .path_prepend = o.path_prepend, .jobs_dir = s.jobs_dir / "builds",
                                 .job_prefix = s.name + "-build", .max_attempts = s.max_attempts,
                                 .hold = o.hold_jobs, .notice = std::move(notice)};
    return [options] { return jobs::make_backend(options); };
  }
  return [slots = s.build_parallel, path_prepend = o.path_prepend, tag = campaign_tag(s)] {
    return jobs::make_host_backend({.slots = slots, .pin = false, .path_prepend = path_prepend, .campaign_tag = tag});
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
