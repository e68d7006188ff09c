// Campaign file parsing: values, precedence, and the exact error text users see.
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <thread>

#include "flotilla/jobs/SlurmSettings.h"
#include "flotilla/scheduler/Settings.h"
#include "Ini.h"
#include "ChoiceValues.h"
#include "flotilla/scheduler/Options.h"
#include "flotilla/jobs/Backend.h"

using namespace flotilla::scheduler;

namespace {

// The Slurm backend's own settings, as its registry row read them (jobs/SlurmSettings.h).
const flotilla::jobs::SlurmSettings& slurm_of(const Settings& s) { return flotilla::jobs::slurm_settings(s.backends); }

const char* kValid = R"([campaign]
name = tiling
seed = 7
[intent]
objective = gflops
direction = maximize
baseline = tile_x=32 tile_y=8
[space]
param = tile_x: int: 8,16,32,64
param = tile_y: int: 1..16 pow2
constraint = tile_x * tile_y <= 256
[explore]
command = bench --x {tile_x} --y {tile_y}
repeats = 3
timeout = 20s
[evaluate]
command = verify --shard {shard} --shards {shards} --x {tile_x}
shards = 4
gate = top 2 per round
[search]
budget = 12
batch = 4
)";

class SettingsTest : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& text) {
    // A folder of this process's own: ctest -j runs these tests side by side, and errors name
    // the file, so its name stays the same.
    std::filesystem::create_directories(m_dir);
    auto path = m_dir / "flotilla_settings_test.ini";
    std::ofstream(path) << text;
    return path;
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }
  const std::filesystem::path m_dir =
      std::filesystem::temp_directory_path() / ("flotilla_settings_test." + std::to_string(::getpid()));
  std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
      load_settings(write(text), overrides);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  }
  static std::string replace(std::string text, const std::string& from, const std::string& to) {
    auto pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    return text.replace(pos, from.size(), to);
  }
};

}  // namespace

TEST_F(SettingsTest, ReadsEveryValue) {
  auto s = load_settings(write(kValid), {});
  EXPECT_EQ(s.name, "tiling");
  EXPECT_EQ(s.results, "tiling.h5");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.objective, "gflops");
  EXPECT_TRUE(s.maximize);
  EXPECT_EQ(s.baseline, "tile_x=32 tile_y=8");
  EXPECT_EQ(s.space.parameters().size(), 2u);
  EXPECT_EQ(s.space.constraints().size(), 1u);
  EXPECT_EQ(s.repeats, 3);
  EXPECT_EQ(s.explore_timeout, std::chrono::seconds(20));
  EXPECT_EQ(s.shards, 4);
  EXPECT_EQ(s.gate.top, 2);
  EXPECT_EQ(s.budget, 12u);
  EXPECT_EQ(s.batch, 4u);
  EXPECT_EQ(s.strategy, "bayes-genetic");  // default: the best general strategy of bench/search (docs/search.md)
  EXPECT_EQ(s.slots, 0u);
}

TEST_F(SettingsTest, CommandLineOverridesFileWhichOverridesDefaults) {
  auto s = load_settings(write(kValid), {"--search.budget=64", "--search.strategy=grid",
                                         "--space.param=tile_x: int: 8,32", "--space.param=tile_y: int: 1,8"});
  EXPECT_EQ(s.budget, 64u);
  EXPECT_EQ(s.strategy, "grid");
  EXPECT_EQ(s.batch, 4u);
  ASSERT_EQ(s.space.parameters().size(), 2u);  // replaces the file's list of params
  EXPECT_EQ(s.space.parameters()[1].values.size(), 2u);
  EXPECT_EQ(s.space.parameters()[0].values.size(), 2u);
}

TEST_F(SettingsTest, ErrorsNameFileLineSectionAndKey) {
  auto f = "flotilla_settings_test.ini";
  EXPECT_EQ(error_of(replace(kValid, "tile_x: int: 8,16,32,64", "tile_x: int: 8..x")),
            std::string(f) + ":9: [space] param 'tile_x': '8..x' is not an integer range");
  EXPECT_EQ(error_of(replace(kValid, "budget = 12", "budget = abc")),
            std::string(f) + ":21: [search] budget: 'abc' is not a non-negative integer");
  EXPECT_EQ(error_of(replace(kValid, "budget = 12", "budgett = 12")),
            std::string(f) + ":21: [search] unknown key 'budgett' (known: strategy, fidelity, warm_start, budget, batch)");
  EXPECT_EQ(error_of(replace(kValid, "[search]", "[serch]")), std::string(f) + ":21: unknown section [serch]");
  EXPECT_EQ(error_of(replace(kValid, "timeout = 20s", "timeout = 20 seconds")),
            std::string(f) + ":15: [explore] timeout: '20 seconds' is not a duration (e.g. 500ms, 20s, 2m, 1h; 0 = none)");
  EXPECT_EQ(error_of(replace(kValid, "objective = gflops\n", "")), std::string(f) + ": [intent] objective or objectives is required");
  EXPECT_EQ(error_of(replace(kValid, "direction = maximize", "direction = up")),
            std::string(f) + ":6: [intent] direction: 'up' is not maximize or minimize");
  EXPECT_EQ(error_of(replace(kValid, "tile_y=8", "tile_y=3")),
            std::string(f) + ":7: [intent] baseline: '3' is not a value of parameter 'tile_y'");
  EXPECT_EQ(error_of(replace(kValid, "<= 256", "<= tile_z")),
            std::string(f) + ":11: [space] constraint 'tile_x * tile_y <= tile_z': unknown name 'tile_z'");
  EXPECT_EQ(error_of(replace(kValid, "gate = top 2 per round", "gate = best two")),
            std::string(f) + ":19: [evaluate] gate: 'best two' is not a gate (expected 'top K per round' or 'all')");
  EXPECT_EQ(error_of(replace(kValid, "batch = 4", "batch = 4\nbatch = 5")),
            std::string(f) + ":23: [search] batch given twice (first at " + f + ":22)");
}

TEST_F(SettingsTest, RegistryNamesAreChecked) {
  EXPECT_EQ(error_of(kValid, {"--search.strategy=simplex"}),
            "command line: [search] strategy: 'simplex' is not one of: grid, random, sobol, bayes, genetic, "
            "annealing, local, hyperband, bandit, nsga2, bayes-escape, parego, bayes-climb, bayes-local, bayes-genetic");
  EXPECT_EQ(error_of(kValid + std::string("[resources]\nbackend = pbs\n")),
            "flotilla_settings_test.ini:24: [resources] backend: 'pbs' is not one of: local, mpi, slurm");
}

// [explore] env / [evaluate] env (templates, no shell) and the working directory every task runs in.
TEST_F(SettingsTest, EnvironmentAndWorkingDirectory) {
  auto s = load_settings(write(kValid), {"--explore.env=OMP_NUM_THREADS={tile_x}", "--evaluate.env=SHARD_OF={shard}/{shards}"});
  EXPECT_EQ(s.explore_env, (std::vector<std::pair<std::string, std::string>>{{"OMP_NUM_THREADS", "{tile_x}"}}));
  EXPECT_EQ(s.evaluate_env, (std::vector<std::pair<std::string, std::string>>{{"SHARD_OF", "{shard}/{shards}"}}));
  EXPECT_EQ(s.workdir, std::filesystem::current_path().lexically_normal());
  EXPECT_EQ(load_settings(write(kValid), {"--campaign.workdir=/tmp"}).workdir, "/tmp");
  EXPECT_EQ(error_of(kValid, {"--explore.env=1X=2"}), "command line: [explore] env: '1X=2' does not start with a variable name");
  EXPECT_EQ(error_of(kValid, {"--explore.env=NOEQUALS"}), "command line: [explore] env: 'NOEQUALS' is not NAME=VALUE");
  EXPECT_EQ(error_of(kValid, {"--explore.env=A={nope}"}).substr(0, 68),
            "command line: [explore] env: 'A={nope}' unknown placeholder {nope} (");
  EXPECT_EQ(error_of(kValid, {"--explore.env=FLOTILLA_TASK=1"}),
            "command line: [explore] env: 'FLOTILLA_TASK=1' sets a variable flotilla sets itself (FLOTILLA_*)");
  EXPECT_EQ(error_of(kValid, {"--campaign.workdir=/nonexistent-flotilla"}),
            "command line: [campaign] workdir: '/nonexistent-flotilla' is not a directory");
}

// A relative workdir in the file is the file's folder (examples run from wherever they are
// installed); on the command line it is the current folder, as any path there.
TEST_F(SettingsTest, RelativeWorkdirInTheFileIsTheFilesFolder) {
  const auto file = write(replace(kValid, "[campaign]\n", "[campaign]\nworkdir = .\n"));
  EXPECT_EQ(load_settings(file, {}).workdir, m_dir);
  std::filesystem::create_directories(m_dir / "sub");
  EXPECT_EQ(load_settings(write(replace(kValid, "[campaign]\n", "[campaign]\nworkdir = sub/../sub\n")), {}).workdir,
            m_dir / "sub");
  EXPECT_EQ(load_settings(file, {"--campaign.workdir=."}).workdir, std::filesystem::current_path().lexically_normal());
  EXPECT_EQ(error_of(replace(kValid, "[campaign]\n", "[campaign]\nworkdir = nowhere\n")),
            fmt::format("flotilla_settings_test.ini:2: [campaign] workdir: '{}' is not a directory",
                        (m_dir / "nowhere").string()));
}

// intent.objective = wall_time: flotilla times the command, minimized, with one warm-up run
// unless explore.warmup says otherwise.
TEST_F(SettingsTest, WallTimeObjective) {
  const auto timed = replace(replace(kValid, "objective = gflops\n", "objective = wall_time\n"), "direction = maximize\n", "");
  auto s = load_settings(write(timed), {});
  EXPECT_EQ(s.objective, "wall_time");
  EXPECT_FALSE(s.maximize);
  EXPECT_EQ(s.warmup, 1);
  EXPECT_EQ(load_settings(write(timed), {"--explore.warmup=0"}).warmup, 0);
  EXPECT_EQ(load_settings(write(kValid), {}).warmup, 0);  // the command measures itself
  EXPECT_EQ(error_of(timed, {"--intent.direction=maximize"}),
            "command line: [intent] direction: 'maximize' is not minimize, and intent.objective = wall_time is a time to "
            "minimize");
  EXPECT_EQ(error_of(replace(kValid, "objective = gflops\ndirection = maximize\n", "objectives = gflops:max, wall_time:min\n")),
            "flotilla_settings_test.ini:5: [intent] objectives: 'gflops:max, wall_time:min' names wall_time, which must "
            "come first and be :min (flotilla times the command for its first objective)");
}

// Choices with values (ChoiceValues.h): the label in the space, the value, expanded once with the
// task's placeholders, in commands; a value naming a placeholder its command lacks is an error
// at the parameter's line.
TEST_F(SettingsTest, ChoicesWithValues) {
  const auto with_db = replace(replace(replace(kValid, "baseline = tile_x=32 tile_y=8", "baseline = tile_x=32 tile_y=8 db=memory"),
                                       "constraint = tile_x * tile_y <= 256\n",
                                       "param = db: enum: memory=:memory:, file={candidate}/t {{x}}.db\n"),
                               "command = bench --x {tile_x} --y {tile_y}", "command = bench --x {tile_x} --db {db}");
  auto s = load_settings(write(with_db), {});
  const auto& db = s.space.parameters().back();
  EXPECT_EQ(db.labels, (std::vector<std::string>{"memory", "file"}));
  PlaceholderValues values = {{"tile_x", "8"}, {"db", "file"}, {"candidate", "7"}, {"tmpdir", "{tmpdir}"}};
  apply_choice_values(s.space, values);
  EXPECT_EQ(values.at("db"), "7/t {x}.db");  // expanded once: the braces it gives are never read again
  values["db"] = "memory";
  apply_choice_values(s.space, values);
  EXPECT_EQ(values.at("db"), ":memory:");
  PlaceholderValues per_file = {{"db", "file"}};  // {candidate} unknown here: left for a later filler
  apply_choice_values(s.space, per_file);
  EXPECT_EQ(per_file.at("db"), "{candidate}/t {x}.db");
  EXPECT_EQ(error_of(replace(with_db, "file={candidate}/", "file={tmpdir}/")),
            "flotilla_settings_test.ini:11: [space] param 'db': choice 'file' names {tmpdir}, which [explore] command "
            "has not (known: candidate, db, repeat, tile_x, tile_y)");
  EXPECT_EQ(error_of(with_db, {"--space.param=tile_x: int: 8,16,32,64", "--space.param=tile_y: int: 1..16 pow2",
                               "--space.param=db: enum: memory={tile_x}, file={db}"}),
            "command line: [space] param 'db': choice 'file' names {db}, a parameter whose choices have values: a value "
            "is expanded once");
}

TEST_F(SettingsTest, CommandLineErrors) {
  EXPECT_EQ(error_of(kValid, {"--search.budget=-1"}), "command line: [search] budget: '-1' is not a non-negative integer");
  EXPECT_EQ(error_of(kValid, {"--search.budgett=1"}), "command line: unknown option '--search.budgett=1'");
}

// Found by fuzz_settings (tests/fuzz/fuzz_settings/open/ambiguous_override_placeholder): an
// ambiguous override whose text holds one of Boost.Program_options' message placeholders hangs
// `flotilla run` for ever, growing, inside po::error::what() (replace_token replaces
// %canonical_option% with text that holds it again). Fixed in read_overrides
// (scheduler/src/Settings.cpp): no guessing of abbreviated keys, and no Boost what() for an
// argument holding '%'. The parse runs in a child process with an alarm, so a hang fails this
// test within 10 s instead of hanging the suite.
TEST_F(SettingsTest, AmbiguousOverrideHoldingAPlaceholderIsAnErrorNotAHang) {
  const auto path = write("[campaign]\nname = x\n");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(10);
    try {
      load_settings(path, {"--resou=%canonical_option%"});
    } catch (const ConfigError& e) {
      std::_Exit(std::string(e.what()).starts_with("command line: unknown option '--resou=%canonical_option%'") ? 0 : 2);
    }
    std::_Exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << " (SIGALRM: the parse hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: another message, 3: accepted";
}

TEST_F(SettingsTest, MissingFile) {
  try {
    load_settings("/nonexistent/campaign.ini", {});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/campaign.ini: cannot open campaign file: No such file or directory");
  }
}

// Hostile input: a resume with another explore.env, evaluate.env or campaign.workdir was accepted,
// and scores of 500 to 700 sat beside 1 to 4 in one file. What a task computes depends on them.
TEST_F(SettingsTest, ResumeRefusesAnotherEnvironmentOrWorkingFolder) {
  const auto base = load_settings(write(kValid), {"--explore.env=SCALE=1", "--evaluate.env=MODE=a"}).fingerprint();
  const auto env = load_settings(write(kValid), {"--explore.env=SCALE=100", "--evaluate.env=MODE=a"}).fingerprint();
  const auto change = fingerprint_change(base, env);
  ASSERT_TRUE(change);
  EXPECT_NE(change->find("explore.env changed from 'SCALE=1' to 'SCALE=100'"), std::string::npos) << *change;
  const auto evaluate = load_settings(write(kValid), {"--explore.env=SCALE=1", "--evaluate.env=MODE=b"}).fingerprint();
  ASSERT_TRUE(fingerprint_change(base, evaluate));
  EXPECT_NE(fingerprint_change(base, evaluate)->find("evaluate.env"), std::string::npos);
  const auto added = load_settings(write(kValid), {}).fingerprint();
  ASSERT_TRUE(fingerprint_change(added, env));  // none recorded, some now
  EXPECT_NE(fingerprint_change(added, env)->find("'explore.env = SCALE=100' was added"), std::string::npos)
      << *fingerprint_change(added, env);
  const auto elsewhere = std::filesystem::temp_directory_path();
  const auto moved =
      load_settings(write(kValid), {"--explore.env=SCALE=1", "--evaluate.env=MODE=a",
                                    "--campaign.workdir=" + elsewhere.string()}).fingerprint();
  ASSERT_TRUE(fingerprint_change(base, moved));
  EXPECT_NE(fingerprint_change(base, moved)->find("campaign.workdir changed from"), std::string::npos);
  EXPECT_FALSE(fingerprint_change(base, base));
}

// Results files written before the fingerprint named the working folder and the env lines (no
// "fingerprint = 2" line) still resume; everything they did record is still compared.
TEST_F(SettingsTest, OlderFingerprintsStillResume) {
  const auto now = load_settings(write(kValid), {"--explore.env=SCALE=1"}).fingerprint();
  std::string older;
  std::istringstream lines(now);
  for (std::string line; std::getline(lines, line);)
    if (!line.starts_with("fingerprint") && !line.starts_with("campaign.workdir") && !line.starts_with("explore.env"))
      older += line + "\n";
  EXPECT_FALSE(fingerprint_change(older, now));
  const auto repeats = load_settings(write(kValid), {"--explore.repeats=5"}).fingerprint();
  ASSERT_TRUE(fingerprint_change(older, repeats));
  EXPECT_NE(fingerprint_change(older, repeats)->find("explore.repeats changed from '3' to '5'"), std::string::npos);
}

// Hostile input: `slots = 4097`, a budget past 10^9 and `warmup = 1001` said "'4097' is not a
// non-negative integer". A number past its limit names the limit.
TEST_F(SettingsTest, NumbersPastTheirLimitNameIt) {
  EXPECT_EQ(error_of(kValid, {"--resources.slots=4097"}),
            "command line: [resources] slots: '4097' is above the largest value allowed, 4096");
  EXPECT_EQ(error_of(kValid, {"--search.budget=1000000000"}),
            "command line: [search] budget: '1000000000' is above the largest value allowed, 100000000");
  EXPECT_EQ(error_of(kValid, {"--search.budget=99999999999999999999999"}),
            "command line: [search] budget: '99999999999999999999999' is above the largest value allowed, 100000000");
  EXPECT_EQ(error_of(kValid, {"--explore.warmup=1001"}),
            "command line: [explore] warmup: '1001' is above the largest value allowed, 1000");
  EXPECT_EQ(error_of(kValid, {"--resources.slots=-1"}), "command line: [resources] slots: '-1' is not a non-negative integer");
  EXPECT_EQ(error_of(kValid, {"--resources.slots=4x"}), "command line: [resources] slots: '4x' is not a non-negative integer");
}

TEST_F(SettingsTest, FingerprintIgnoresBudgetButNotCommands) {
  auto a = load_settings(write(kValid), {});
  auto b = load_settings(write(kValid), {"--search.budget=99", "--campaign.seed=3", "--resources.slots=1"});
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  auto c = load_settings(write(kValid), {"--explore.repeats=5"});
  EXPECT_NE(a.fingerprint(), c.fingerprint());
}

TEST(Duration, Forms) {
  EXPECT_EQ(parse_duration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(parse_duration("2m"), std::chrono::minutes(2));
  EXPECT_EQ(parse_duration("1h"), std::chrono::hours(1));
  EXPECT_EQ(parse_duration("0"), std::chrono::milliseconds(0));
  EXPECT_FALSE(parse_duration("5"));
  EXPECT_FALSE(parse_duration("s"));
  EXPECT_FALSE(parse_duration("-1s"));
}

TEST_F(SettingsTest, CommandPlaceholdersAreCheckedAtLoad) {
  auto f = std::string("flotilla_settings_test.ini");
  EXPECT_EQ(error_of(replace(kValid, "--y {tile_y}", "--y {tile_z}")),
            f + ":13: [explore] command: unknown placeholder {tile_z} (known: candidate, repeat, tile_x, tile_y)");
  EXPECT_EQ(error_of(replace(kValid, "--x {tile_x}\n", "--x {tile_x} {repeat}\n")),
            f + ":17: [evaluate] command: unknown placeholder {repeat} (known: candidate, shard, shards, tile_x, tile_y)");
}

TEST_F(SettingsTest, SlurmResources) {
  auto s = load_settings(write(kValid + std::string("[resources]\nbackend = slurm\npartition = gb200\nnodes = 2\n"
                                                    "gpus_per_node = 4\ntime_limit = 2h\nslurm_client = sbatch\n")),
                         {});
  EXPECT_EQ(s.backend, "slurm");
  EXPECT_EQ(slurm_of(s).shape.partition, "gb200");
  EXPECT_EQ(slurm_of(s).shape.nodes, 2);
  EXPECT_EQ(slurm_of(s).shape.ranks_per_node, 2);
  EXPECT_EQ(slurm_of(s).shape.gpus_per_node, 4);
  EXPECT_EQ(slurm_of(s).shape.time_limit, std::chrono::minutes(120));
  EXPECT_EQ(slurm_of(s).client, "sbatch");
  EXPECT_EQ(s.jobs_dir, "tiling.h5.jobs");
  EXPECT_EQ(error_of(kValid, {"--resources.time_limit=30s"}),
            "command line: [resources] time_limit: '30s' is shorter than a minute");
  EXPECT_EQ(error_of(kValid, {"--resources.slurm_client=rest"}),
            "command line: [resources] slurm_client: 'rest' is not one of: api, sbatch");
  EXPECT_EQ(slurm_of(s).start, "batch");
  EXPECT_EQ(slurm_of(load_settings(write(kValid), {"--resources.slurm_start=allocate"})).start, "allocate");
  EXPECT_EQ(error_of(kValid, {"--resources.slurm_start=salloc"}),
            "command line: [resources] slurm_start: 'salloc' is not one of: batch, allocate");
  EXPECT_EQ(error_of(kValid + std::string("[resources]\nslurm_client = sbatch\nslurm_start = allocate\n")),
            "flotilla_settings_test.ini:25: [resources] slurm_start: 'allocate' needs resources.slurm_client = api: the "
            "sbatch client has no way to allocate at once and release with a status");
}

TEST_F(SettingsTest, SbatchPassThroughAndSetupLines) {
  auto s = load_settings(write(kValid + std::string("[resources]\nbackend = slurm\nsbatch = --constraint=gb200 --exclusive\n"
                                                    "setup = module load cuda/12.4\nsetup = source 'my env.sh'\n"
                                                    "[resources.evaluate]\nsbatch = --mem=8G\n")),
                         {});
  using flotilla::jobs::SbatchOption;
  EXPECT_EQ(slurm_of(s).shape.extra, (std::vector<SbatchOption>{{"constraint", "gb200"}, {"exclusive", ""}}));
  EXPECT_EQ(slurm_of(s).stage("explore").extra, slurm_of(s).shape.extra);  // a stage without its own takes [resources]'
  EXPECT_EQ(slurm_of(s).stage("evaluate").extra, (std::vector<SbatchOption>{{"mem", "8G"}}));  // and one with its own, only those
  EXPECT_EQ(slurm_of(s).setup, (std::vector<std::string>{"module load cuda/12.4", "source 'my env.sh'"}));

  const std::string f = "flotilla_settings_test.ini";
  EXPECT_EQ(error_of(kValid + std::string("[resources]\nsbatch = --partition=debug\n")),
            f + ":24: [resources] sbatch: '--partition' is set by flotilla for every job: use resources.partition");
  EXPECT_EQ(error_of(kValid, {"--resources.sbatch=--wrap=id"}),
            "command line: [resources] sbatch: '--wrap' is set by flotilla for every job, which depends on it "
            "(docs/slurm.md)");
  EXPECT_EQ(error_of(kValid, {"--resources.sbatch=--mem=lots"}),
            "command line: [resources] sbatch: '--mem=lots': the value is not a memory size (e.g. 64G, 500M; K M G T, "
            "default M)");
  EXPECT_NE(error_of(kValid, {"--resources.sbatch=--frobnicate"})
                .find("'--frobnicate' is not an option flotilla passes through; it knows --constraint --exclusive"),
            std::string::npos);
  EXPECT_EQ(error_of(kValid, {"--resources.evaluate.sbatch=-C gb200"}),
            "command line: [resources.evaluate] sbatch: '-C' is not an option: write each as --name=value or --name "
            "(short forms such as -C are not read)");
  EXPECT_EQ(error_of(kValid + std::string("[resources]\nsetup = module load 'cuda\n")),
            f + ":24: [resources] setup: 'module load \'cuda' unterminated quote");
}

TEST_F(SettingsTest, StagedIntent) {
  const std::string staged = replace(kValid, "baseline = tile_x=32 tile_y=8\n",
                                     "baseline = tile_x=32 tile_y=8\nstages = bottleneck\nstage_threshold = 0.05\n"
                                     "component = x: share_x: tile_x\ncomponent = y: share_y: tile_y tile_x\n"
                                     "component = rest: share_rest:\n");
  auto s = load_settings(write(staged), {});
  EXPECT_TRUE(s.staged);
  EXPECT_DOUBLE_EQ(s.stage_threshold, 0.05);
  ASSERT_EQ(s.components.size(), 3u);
  EXPECT_EQ(s.components[1].name, "y");
  EXPECT_EQ(s.components[1].share_metric, "share_y");
  EXPECT_EQ(s.components[1].params, (std::vector<std::string>{"tile_y", "tile_x"}));
  EXPECT_TRUE(s.components[2].params.empty());
  EXPECT_FALSE(load_settings(write(staged), {"--intent.stages=none"}).staged);  // components kept, not staged
  EXPECT_FALSE(load_settings(write(kValid), {}).staged);

  auto f = std::string("flotilla_settings_test.ini");
  EXPECT_EQ(error_of(replace(staged, "share_x: tile_x", "share_x: tile_z")),
            f + ":10: [intent] component: 'x: share_x: tile_z' names 'tile_z', which is not a [space] parameter");
  EXPECT_EQ(error_of(replace(staged, "share_x: tile_x", "share x: tile_x")),
            f + ":10: [intent] component: 'x: share x: tile_x' has a bad share metric name 'share x' (metric names: "
                "[A-Za-z_][A-Za-z0-9_.]*)");
  EXPECT_EQ(error_of(replace(staged, "share_x: tile_x", "tile_x")),
            f + ":10: [intent] component: 'x: tile_x' is not 'NAME: SHARE_METRIC: PARAMS'");
  EXPECT_EQ(error_of(replace(staged, "y: share_y", "x: share_y")),
            f + ":11: [intent] component: 'x: share_y: tile_y tile_x' repeats component 'x'");
  EXPECT_EQ(error_of(replace(staged, "tile_y tile_x", "tile_y tile_y")),
            f + ":11: [intent] component: 'y: share_y: tile_y tile_y' names parameter 'tile_y' twice");
  EXPECT_EQ(error_of(replace(staged, "stages = bottleneck", "stages = profile")),
            f + ":8: [intent] stages: 'profile' is not none or bottleneck");
  EXPECT_EQ(error_of(staged, {"--intent.stage_threshold=-0.1"}),
            "command line: [intent] stage_threshold: '-0.1' is not a fraction from 0 to 10");
  EXPECT_EQ(error_of(replace(staged, "baseline = tile_x=32 tile_y=8\n", "")),
            f + ":7: [intent] stages: 'bottleneck' needs [intent] baseline: the first stage profiles it");
  EXPECT_EQ(error_of(replace(staged, "command = verify --shard {shard} --shards {shards} --x {tile_x}\n", "")),
            f + ":8: [intent] stages: 'bottleneck' needs [evaluate] command: every stage's winner must be verified");
  EXPECT_EQ(error_of(staged, {"--intent.component=rest: share_rest:"}),
            f + ":8: [intent] stages: 'bottleneck' needs at least one [intent] component with parameters "
                "(or a [propose] command that changes the code)");
}

TEST_F(SettingsTest, SuiteSettings) {
  auto gtest = replace(kValid, "shards = 4", "shards = 4\nsuite = gtest\nrequire = no_regression");
  auto s = load_settings(write(gtest), {});
  EXPECT_EQ(s.suite, flotilla::suites::SuiteKind::gtest);
  EXPECT_EQ(s.require, flotilla::results::TestGate::no_regression);
  EXPECT_TRUE(s.rerun_failures);
  EXPECT_NE(s.fingerprint().find("evaluate.suite = gtest"), std::string::npos);
  EXPECT_EQ(load_settings(write(kValid), {}).fingerprint().find("evaluate.suite"), std::string::npos)
      << "campaigns without a suite keep their fingerprint";
  auto f = std::string("flotilla_settings_test.ini");
  EXPECT_EQ(error_of(gtest, {"--evaluate.rerun_failures=yes"}),
            "command line: [evaluate] rerun_failures: 'yes' is not true or false");
  EXPECT_EQ(error_of(replace(gtest, "baseline = tile_x=32 tile_y=8\n", "")),
            f + ":19: [evaluate] require: 'no_regression' needs [intent] baseline to compare against");
  EXPECT_EQ(error_of(kValid, {"--evaluate.suite=files"}),
            "command line: [evaluate] suite: 'files' needs [evaluate] files = GLOB");
  EXPECT_EQ(error_of(kValid, {"--evaluate.files=*.test"}),
            "command line: [evaluate] files: '*.test' is used only with suite = files or per_file");
  EXPECT_EQ(error_of(kValid, {"--evaluate.suite=tap"}),
            "command line: [evaluate] suite: 'tap' needs [evaluate] list = COMMAND (it prints the test names, one a "
            "line, so a test the shards leave out is caught), or list = none to accept the reports as complete");
  EXPECT_EQ(error_of(kValid, {"--evaluate.suite=tap", "--evaluate.list=none"}),
            f + ":17: [evaluate] command: 'verify --shard {shard} --shards {shards} --x {tile_x}' must write its "
                "report to {report} (evaluate.suite)");
  EXPECT_EQ(error_of(kValid, {"--evaluate.suite=tap", "--evaluate.list=lister {tile_q}"}),
            "command line: [evaluate] list: unknown placeholder {tile_q} (known: candidate, tile_x, tile_y)");
  EXPECT_EQ(error_of(kValid, {"--evaluate.list=none"}),
            "command line: [evaluate] list: 'none' is used only with suite = junit or tap");
  EXPECT_EQ(error_of(kValid, {"--evaluate.suite=tap", "--evaluate.list=none", "--evaluate.command=check {report}"}),
            "command line: [evaluate] command: 'check {report}' must select its tests by {shard} of {shards} "
            "(shards > 1)");
  EXPECT_EQ(error_of(kValid, {"--evaluate.command=check {report}"}),
            "command line: [evaluate] command: unknown placeholder {report} (known: candidate, shard, shards, "
            "tile_x, tile_y)");
}

// suite = lit / pytest: evaluate.paths is required with them and refused elsewhere; it is part of
// the fingerprint.
TEST_F(SettingsTest, LitAndPytestNeedPaths) {
  for (const char* kind : {"lit", "pytest"}) {
    const std::string suite = std::string("--evaluate.suite=") + kind;
    EXPECT_EQ(error_of(kValid, {suite}),
              "command line: [evaluate] suite: '" + std::string(kind) +
                  "' needs [evaluate] paths = PATH ... (where the runner finds its tests)");
    auto s = load_settings(write(kValid), {suite, "--evaluate.paths=tests/lit more"});
    EXPECT_EQ(s.suite_paths, "tests/lit more");
    EXPECT_NE(s.fingerprint().find("evaluate.paths = tests/lit more\n"), std::string::npos);
  }
  EXPECT_EQ(error_of(kValid, {"--evaluate.paths=tests"}),
            "command line: [evaluate] paths: 'tests' is used only with suite = lit or pytest");
  EXPECT_EQ(error_of(kValid, {"--evaluate.suite=nose"}),
            "command line: [evaluate] suite: 'nose' is not one of: exit, gtest, ctest, lit, pytest, files, per_file, "
            "junit, tap");
}

// evaluate.shards = auto: one shard per slot (resources.slots; 0: the CPUs; Slurm: nodes x
// ranks_per_node).
TEST_F(SettingsTest, ShardsAuto) {
  EXPECT_EQ(load_settings(write(kValid), {"--evaluate.shards=auto", "--resources.slots=3"}).shards, 3);
  EXPECT_EQ(load_settings(write(kValid), {"--evaluate.shards=auto", "--resources.slots=0"}).shards,
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_EQ(load_settings(write(kValid), {"--evaluate.shards=auto", "--resources.slots=0", "--resources.backend=slurm",
                                          "--resources.partition=debug", "--resources.nodes=2",
                                          "--resources.ranks_per_node=4"})
                .shards,
            8);
  EXPECT_EQ(error_of(kValid, {"--evaluate.shards=some"}),
            "command line: [evaluate] shards: 'some' is not a positive integer or auto");
}

// suite = per_file: {file} required, the summary pattern compiled and pass_when's names known at
// load time, no_drop only over the summary's groups and with no_regression; each error names its line.
TEST_F(SettingsTest, PerFileSuiteSettings) {
  const auto f = std::string("flotilla_settings_test.ini");
  const std::string per_file = replace(
      replace(kValid, "command = verify --shard {shard} --shards {shards} --x {tile_x}",
              "command = check --x {tile_x} --scratch {tmpdir} {file}"),
      "shards = 4",
      "shards = 4\nsuite = per_file\nfiles = corpus/*.test\nrequire = no_regression\n"
      "summary = (?<errors>\\d+) errors out of (?<tests>\\d+) tests\npass_when = errors == 0\nno_drop = tests\n"
      "parallel = 3");
  const auto s = load_settings(write(per_file), {});
  EXPECT_EQ(s.suite, flotilla::suites::SuiteKind::per_file);
  EXPECT_EQ(s.suite_summary, "(?<errors>\\d+) errors out of (?<tests>\\d+) tests");
  EXPECT_EQ(s.suite_pass_when, "errors == 0");
  EXPECT_EQ(s.suite_no_drop, std::vector<std::string>{"tests"});
  EXPECT_EQ(s.suite_parallel, 3);
  EXPECT_NE(s.fingerprint().find("evaluate.summary = (?<errors>"), std::string::npos);
  EXPECT_NE(s.fingerprint().find("evaluate.no_drop = tests\n"), std::string::npos);
  EXPECT_EQ(error_of(per_file, {"--evaluate.command=check {tile_x}"}),
            "command line: [evaluate] command: 'check {tile_x}' must name the file it checks as {file} (suite = "
            "per_file)");
  EXPECT_EQ(error_of(replace(per_file, "tests\npass_when", "tests)\npass_when")),
            f + ":22: [evaluate] summary: '(?<errors>\\d+) errors out of (?<tests>\\d+) tests)': unmatched closing "
                "parenthesis at offset 48");
  EXPECT_EQ(error_of(per_file, {"--evaluate.pass_when=erors == 0"}),
            "command line: [evaluate] pass_when: 'erors == 0': unknown name 'erors' (known: errors, tests, exit_code)");
  EXPECT_EQ(error_of(per_file, {"--evaluate.no_drop=checks"}),
            "command line: [evaluate] no_drop: 'checks' names 'checks', which is no named group of [evaluate] summary "
            "(its groups: errors, tests)");
  EXPECT_EQ(error_of(per_file, {"--evaluate.require=all_pass"}),
            f + ":24: [evaluate] no_drop: 'tests' needs [evaluate] require = no_regression (it compares with the "
                "baseline)");
  const auto without = [&](std::string text, std::initializer_list<const char*> lines) {
    for (const char* line : lines) text = replace(text, line, "");
    return text;
  };
  EXPECT_EQ(error_of(without(per_file, {"summary = (?<errors>\\d+) errors out of (?<tests>\\d+) tests\n",
                                        "no_drop = tests\n"})),
            f + ":22: [evaluate] pass_when: 'errors == 0' needs [evaluate] summary = PATTERN (its named groups are the "
                "variables)");
  EXPECT_EQ(error_of(kValid, {"--evaluate.summary=(?<n>\\d+)"}),
            "command line: [evaluate] summary: '(?<n>\\d+)' is used only with suite = per_file");
  EXPECT_EQ(error_of(kValid, {"--evaluate.parallel=4"}),
            "command line: [evaluate] parallel: '4' is used only with suite = per_file");
  // Without summary, the exit code decides; parallel defaults to the shard's CPUs (0).
  const auto plain = load_settings(
      write(without(per_file, {"summary = (?<errors>\\d+) errors out of (?<tests>\\d+) tests\n",
                               "pass_when = errors == 0\n", "no_drop = tests\n"})),
      {"--evaluate.parallel=0"});
  EXPECT_EQ(plain.suite_summary, "");
  EXPECT_EQ(plain.suite_parallel, 0);
}

// The file's syntax (Ini.h): '#' starts a comment only after a blank and outside quotes, \# is
// a literal '#', a comment that swallowed a placeholder is an error, and every bad line is named.
TEST_F(SettingsTest, HashInValuesAndComments) {
  const auto f = std::string("flotilla_settings_test.ini");
  auto s = load_settings(write(replace(kValid, "command = bench --x {tile_x} --y {tile_y}",
                                       "command = bench --label=#1 --x {tile_x} --y {tile_y}   # the benchmark")),
                         {});
  EXPECT_EQ(s.explore_command, "bench --label=#1 --x {tile_x} --y {tile_y}");
  s = load_settings(write(replace(kValid, "repeats = 3", "repeats = 5 # more")), {});
  EXPECT_EQ(s.repeats, 5);
  s = load_settings(write(replace(kValid, "command = bench --x {tile_x} --y {tile_y}",
                                  "command = bench \"# quoted\" --x {tile_x} --y {tile_y} \\# escaped")),
                    {});
  EXPECT_EQ(s.explore_command, "bench \"# quoted\" --x {tile_x} --y {tile_y} # escaped");
  EXPECT_EQ(error_of(replace(kValid, "command = bench --x {tile_x} --y {tile_y}",
                             "command = bench --x {tile_x} # --y {tile_y}")),
            f + ":13: [explore] command: the comment after '#' holds a placeholder ('--y {tile_y}'): a '#' after a "
                "blank starts a comment; write \\# if it belongs to the command");
}

TEST_F(SettingsTest, EveryBadLineIsNamed) {
  const auto f = std::string("flotilla_settings_test.ini");
  EXPECT_EQ(error_of(replace(kValid, "seed = 7\n", "seed = 7\ntile_x 8\n")),
            f + ":4: expected 'key = value', '[section]' or a comment, found 'tile_x 8'");
  EXPECT_EQ(error_of(replace(kValid, "[search]", "[search")), f + ":20: '[search' is not a [section]");
  EXPECT_EQ(error_of(replace(kValid, "name = tiling", "name = til\xff" "ing")), f + ":2: the line is not UTF-8");
  EXPECT_EQ(error_of(std::string("# only\n; comments\n")), f + ": [intent] objective or objectives is required");
  EXPECT_EQ(error_of(std::string("[intent]\nobjective = x\0y\n", 26)), f + ":2: the line holds a NUL byte: a campaign file is text");
  const auto dir = std::filesystem::temp_directory_path() / "flotilla_settings_dir";
  std::filesystem::create_directories(dir);
  try {
    load_settings(dir, {});
    FAIL() << "a directory was read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ": is not a campaign file but a directory");
  }
}

TEST(Ini, ParsesSectionsKeysAndComments) {
  const auto entries = flotilla::scheduler::parse_ini(
      "\xEF\xBB\xBF# c\n[a]\nk = v # c1\nk = 'x # y'\n[b.c]\n  key=  spaced value \n", "t.ini");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].key, "a.k");
  EXPECT_EQ(entries[0].value, "v");
  EXPECT_EQ(entries[0].comment, "c1");
  EXPECT_EQ(entries[0].line, 3);
  EXPECT_EQ(entries[1].value, "'x # y'");
  EXPECT_EQ(entries[2].key, "b.c.key");
  EXPECT_EQ(entries[2].value, "spaced value");
  EXPECT_TRUE(flotilla::scheduler::is_utf8("gr\xc3\xbc\xc3\x9f"));
  EXPECT_FALSE(flotilla::scheduler::is_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(flotilla::scheduler::is_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(flotilla::scheduler::is_utf8("\xe2\x82"));          // cut short
}

// Script injection (flotilla sbatch renders what these say into job.sh): refused at load, each
// naming the key, so no value can add a shell line, an #SBATCH option or a folder elsewhere.
TEST_F(SettingsTest, ValuesThatReachJobScriptsAreChecked) {
  EXPECT_EQ(error_of(kValid, {"--campaign.name=x\nrm -rf ~"}),
            "command line: [campaign] name: 'x\nrm -rf ~' may hold only letters, digits and . _ + -, and not start with "
            ". or - (it names job folders, Slurm jobs and files)");
  EXPECT_EQ(error_of(kValid, {"--campaign.name=../../../../X"}).substr(0, 50),
            "command line: [campaign] name: '../../../../X' may");
  EXPECT_EQ(error_of(replace(kValid, "[search]", "[resources]\nqos = normal --wrap=id\n[search]")),
            "flotilla_settings_test.ini:21: [resources] qos: 'normal --wrap=id' is not a Slurm name (letters, digits, _ . -)");
  EXPECT_EQ(error_of(kValid, {"--resources.partition=debug\n#SBATCH --wrap=id"}),
            "command line: [resources] partition: 'debug\n#SBATCH --wrap=id' is not a Slurm partition name or list "
            "(letters, digits, _ . - and commas)");
  EXPECT_EQ(error_of(kValid, {"--resources.account=a;id"}),
            "command line: [resources] account: 'a;id' is not a Slurm name (letters, digits, _ . -)");
  EXPECT_EQ(error_of(kValid, {"--resources.evaluate.qos=x y"}),
            "command line: [resources] evaluate.qos: 'x y' is not a Slurm name (letters, digits, _ . -)");
  EXPECT_EQ(error_of(kValid, {"--resources.jobs_dir=/tmp/a\nid"}),
            "command line: [resources] jobs_dir: '/tmp/a\nid' holds a blank or a control character, which a job "
            "script's #SBATCH lines cannot carry");
  EXPECT_EQ(slurm_of(load_settings(write(kValid), {"--resources.partition=debug,gb200"})).shape.partition, "debug,gb200");
}

// Each backend declares its own settings (jobs::backend_settings, next to the backend); the one
// option table carries every one of them, once, so the INI reader, the command line and --help
// know them, and a backend's key left out of the table would be an unknown key in every file.
TEST(BackendSettings, DeclaredByTheBackendsAndInTheOneTable) {
  const auto settings = flotilla::jobs::backend_settings();
  ASSERT_FALSE(settings.empty());
  std::set<std::string_view> keys;
  for (const auto& s : settings) {
    EXPECT_TRUE(s.key.starts_with("resources.")) << s.key;
    EXPECT_TRUE(keys.insert(s.key).second) << s.key << " declared twice";
    const auto* decl = find_option(s.key);
    ASSERT_NE(decl, nullptr) << s.key << " is not in the option table";
    EXPECT_EQ(decl->default_value, s.default_value);
    EXPECT_EQ(decl->help, s.help);
  }
  EXPECT_TRUE(keys.contains("resources.partition"));  // slurm's
  EXPECT_TRUE(keys.contains("resources.slots"));      // local's
  EXPECT_TRUE(keys.contains("resources.ranks"));      // mpi's
  std::set<std::string_view> table_keys;
  for (const auto& decl : option_table()) EXPECT_TRUE(table_keys.insert(decl.key).second) << decl.key << " twice";
  EXPECT_TRUE(flotilla::jobs::backend_renders_job_scripts("slurm"));
  EXPECT_FALSE(flotilla::jobs::backend_renders_job_scripts("local"));
  EXPECT_FALSE(flotilla::jobs::backend_renders_job_scripts("nosuch"));
}

TEST_F(SettingsTest, SeveralObjectives) {
  const auto f = std::string("flotilla_settings_test.ini");
  const auto several = replace(replace(kValid, "objective = gflops\n", "objectives = time_s:min, residual:min\n"),
                               "direction = maximize\n", "");
  auto s = load_settings(write(several), {});
  ASSERT_EQ(s.objectives.size(), 2u);
  EXPECT_EQ(s.objective, "time_s");  // the first is the one every single-objective view shows
  EXPECT_FALSE(s.maximize);
  EXPECT_EQ(s.pick.text(), "knee");
  EXPECT_EQ(s.strategy, "parego");  // the default for several objectives
  EXPECT_FALSE(s.confirm);         // no speed-up is claimed for a pick
  EXPECT_EQ(s.max_repeats, s.repeats);
  EXPECT_NE(s.fingerprint().find("intent.objectives = time_s:min,residual:min\nintent.pick = knee\n"), std::string::npos);
  EXPECT_EQ(load_settings(write(kValid), {}).fingerprint().find("intent.objectives"), std::string::npos);
  EXPECT_EQ(load_settings(write(several), {"--search.strategy=random"}).strategy, "random");
  EXPECT_EQ(load_settings(write(several), {"--intent.pick=weighted 2, 1"}).pick.text(), "weighted 2,1");
  // One objective written as a list is that one objective.
  auto one = load_settings(write(replace(several, "time_s:min, residual:min", "gflops:max")), {});
  EXPECT_TRUE(one.objectives.empty());
  EXPECT_EQ(one.objective, "gflops");
  EXPECT_TRUE(one.maximize);

  EXPECT_EQ(error_of(replace(kValid, "objective = gflops\n", "objective = gflops\nobjectives = a:min, b:max\n")),
            f + ":6: [intent] objectives: 'a:min, b:max' is given with intent.objective (at " + f +
                ":5): give one objective, or list them all here");
  EXPECT_EQ(error_of(replace(kValid, "objective = gflops\n", "")), f + ": [intent] objective or objectives is required");
  EXPECT_EQ(error_of(replace(several, "residual:min", "residual")),
            f + ":5: [intent] objectives: 'residual' has no direction: write residual:min or residual:max");
  EXPECT_EQ(error_of(several, {"--intent.direction=minimize"}),
            "command line: [intent] direction: 'minimize' is given with intent.objectives, which names each "
            "objective's direction");
  EXPECT_EQ(error_of(several, {"--intent.pick=weighted 1"}),
            "command line: [intent] pick: gives 1 weights for 2 objectives (e.g. weighted 1,1)");
  EXPECT_EQ(error_of(kValid, {"--intent.pick=knee"}),
            "command line: [intent] pick: 'knee' needs intent.objectives: with one objective the best verified "
            "candidate wins");
  EXPECT_EQ(error_of(several, {"--intent.target=3"}),
            "command line: [intent] target: '3' needs one objective: with several, no single value says the campaign "
            "is done");
  EXPECT_NE(error_of(several, {"--confirm.enabled=true"}).find("[confirm] enabled: 'true' needs one objective"),
            std::string::npos);
  EXPECT_NE(error_of(several, {"--explore.max_repeats=9"}).find("[explore] max_repeats: '9' needs one objective"),
            std::string::npos);
}

TEST_F(SettingsTest, WarmStartNeedsAFileAndAStrategyThatUsesIt) {
  const auto file = write(kValid).string();  // any existing file passes the load-time check
  EXPECT_EQ(load_settings(write(kValid), {"--search.warm_start=" + file}).warm_start, file);
  EXPECT_EQ(error_of(kValid, {"--search.warm_start=/no/such.h5"}),
            "command line: [search] warm_start: '/no/such.h5' is not a file (a finished campaign's results, OTHER.h5)");
  EXPECT_EQ(error_of(kValid, {"--search.warm_start=" + file, "--search.strategy=grid"}),
            "command line: [search] warm_start: '" + file +
                "' is ignored by search.strategy = grid: bayes, bandit, bayes-escape, parego, bayes-climb, bayes-local "
                "and bayes-genetic use a warm start");
}

TEST_F(SettingsTest, Fidelity) {
  const auto f = std::string("flotilla_settings_test.ini");
  const auto with = replace(replace(kValid, "budget = 12", "fidelity = tile_x\nbudget = 12"), "tile_x=32 tile_y=8",
                            "tile_x=64 tile_y=4");
  auto s = load_settings(write(with), {});
  EXPECT_EQ(s.fidelity, "tile_x");
  EXPECT_EQ(s.fidelity_full(), "64");
  EXPECT_EQ(s.strategy, "hyperband");  // the default with a fidelity
  EXPECT_NE(s.fingerprint().find("search.fidelity = tile_x\n"), std::string::npos);
  EXPECT_EQ(load_settings(write(kValid), {}).fingerprint().find("search.fidelity"), std::string::npos);
  EXPECT_EQ(error_of(with, {"--search.fidelity=size"}),
            "command line: [search] fidelity: 'size' is not a [space] parameter");
  EXPECT_EQ(error_of(replace(with, "1..16 pow2", "1..32 pow2"), {"--search.fidelity=tile_y"}),
            "command line: [search] fidelity: 'tile_y' needs a parameter of 2 to 5 values (hyperband's rungs); "
            "'tile_y' has 6");
  EXPECT_EQ(error_of(with, {"--search.strategy=bayes"}),
            "command line: [search] strategy: 'bayes' cannot search over search.fidelity: hyperband is the strategy "
            "that spends evaluations over a fidelity");
  EXPECT_EQ(error_of(replace(with, "tile_x=64 tile_y=4", "tile_x=32 tile_y=8")),
            f + ":7: [intent] baseline: 'tile_x=32 tile_y=8' has tile_x=32: the baseline is the reference at full "
                "fidelity (tile_x=64)");
}
