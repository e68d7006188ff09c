// campaign_hold_test.cpp — `flotilla sbatch`'s path through the campaign, without a cluster: the
// real Slurm backend over the fake Slurm (tests/slurm/FakeSlurm.h), made from the BackendOptions
// the campaign passes (its own settings as the Slurm row read them), in hold mode. The job it
// writes instead of submitting comes back as a value (kExitHeld and RunOptions::on_held), never
// an exception; nothing reaches Slurm; and a second run points at the same folder.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "FakeSlurm.h"
#include "flotilla/jobs/Backend.h"
#include "flotilla/scheduler/Campaign.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHeld = R"([campaign]
name = held
seed = 5
[intent]
objective = score
baseline = x=1
[space]
param = x: int: 1..8
[explore]
command = bench {x}
repeats = 2
[evaluate]
command = verify {x}
[search]
strategy = random
budget = 4
batch = 2
[resources]
backend = slurm
ranks_per_node = 3
)";

struct HeldRun {
  int rc = -1;
  std::optional<jobs::HeldJob> held;
  std::vector<jobs::BackendOptions> made;  // what the campaign made its backends with
  std::string err;
};

HeldRun run_held(const fs::path& dir, jobs::test::FakeSlurm& slurm) {
  const auto settings = load_settings(dir / "held.ini", {fmt::format("--campaign.results={}", (dir / "held.h5").string()),
                                                         fmt::format("--resources.jobs_dir={}", (dir / "jobs").string())});
  HeldRun run;
  RunOptions options{.live_progress = false,
                     .hold_jobs = true,
                     .on_held = [&](const jobs::HeldJob& job) { run.held = job; },
                     .make_backend = [&](const jobs::BackendOptions& o) {
                       run.made.push_back(o);
                       auto resources = jobs::slurm_resources(o);  // as make_slurm_backend resolves them
                       resources.client = "fake";
                       return jobs::test::make_fake_slurm_backend(slurm, o, resources);
                     }};
  std::ostringstream out, err;
  run.rc = run_campaign(settings, options, out, err);
  run.err = err.str();
  return run;
}

TEST(CampaignHold, TheJobWrittenInsteadOfSubmittedIsAValue) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("flotilla-campaign-hold-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "held.ini") << kHeld;
  jobs::test::FakeSlurm slurm;

  const auto first = run_held(dir, slurm);
  EXPECT_EQ(first.rc, kExitHeld) << first.err;
  ASSERT_TRUE(first.held);
  EXPECT_FALSE(first.held->already_written);
  EXPECT_EQ(first.held->dir.parent_path(), dir / "jobs");
  EXPECT_TRUE(fs::exists(first.held->dir / "job.sh"));
  EXPECT_EQ(first.held->tasks, 2u);  // round 0: the baseline's two repeats
  EXPECT_TRUE(slurm.submitted().empty());
  // The campaign named stages and passed the Slurm row's own settings through, untouched.
  ASSERT_EQ(first.made.size(), 1u);
  EXPECT_EQ(first.made[0].name, "slurm");
  EXPECT_TRUE(first.made[0].config);
  EXPECT_EQ(first.made[0].stages, (std::vector<std::string>{"explore", "evaluate"}));
  EXPECT_TRUE(first.made[0].hold);
  EXPECT_EQ(jobs::slurm_resources(first.made[0]).shape.ranks_per_node, 3);

  const auto again = run_held(dir, slurm);  // `flotilla sbatch` again before the job was submitted
  EXPECT_EQ(again.rc, kExitHeld) << again.err;
  ASSERT_TRUE(again.held);
  EXPECT_TRUE(again.held->already_written);
  EXPECT_EQ(again.held->dir, first.held->dir);
  EXPECT_TRUE(slurm.submitted().empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace flotilla::scheduler::test
