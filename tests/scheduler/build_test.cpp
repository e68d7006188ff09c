// The build stage's pure decisions (Builds.h) and its settings: keys, folder names, one build per
// key, and the exact errors a [build] section can give.
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "BuildInputs.h"
#include "BuildStage.h"
#include "FakeSlurm.h"
#include "flotilla/jobs/SlurmSettings.h"
#include "flotilla/scheduler/Builds.h"
#include "flotilla/scheduler/Settings.h"

using namespace flotilla::scheduler;

namespace {

// The Slurm backend's own settings, as its registry row read them (jobs/SlurmSettings.h).
const flotilla::jobs::SlurmSettings& build_slurm_of(const Settings& s) { return flotilla::jobs::slurm_settings(s.backends); }

using Values = std::map<std::string, std::string, std::less<>>;

TEST(BuildKey, NamesOnlyTheParametersTheCommandUses) {
  const std::string command = "c++ -O{opt} -DBLOCK={block} -o {build_dir}/kernel kernel.cpp";
  const auto a = build_key(command, {{"opt", "2"}, {"block", "32"}, {"threads", "4"}, {"build_dir", "/x"}});
  EXPECT_EQ(a, command + "\nblock=32\nopt=2\n");
  // A parameter the build does not name (threads) and the folder itself change nothing.
  EXPECT_EQ(a, build_key(command, {{"opt", "2"}, {"block", "32"}, {"threads", "8"}, {"build_dir", "/y"}}));
  EXPECT_NE(a, build_key(command, {{"opt", "3"}, {"block", "32"}, {"threads", "4"}}));
  // The command's text is part of the key: another command never shares a build.
  EXPECT_NE(a, build_key(command + " -g", {{"opt", "2"}, {"block", "32"}}));
}

TEST(BuildKey, FolderNameIsAStableHash) {
  EXPECT_EQ(build_folder_name(""), "cbf29ce484222325");  // FNV-1a 64 of nothing: its offset basis
  EXPECT_EQ(build_folder_name("a"), "af63dc4c8601ec8c");
  EXPECT_NE(build_folder_name("cc\nopt=2\n"), build_folder_name("cc\nopt=3\n"));
  EXPECT_EQ(build_folder_name("cc\nopt=2\n").size(), 16u);
}

TEST(BuildPlan, OneBuildPerKeyFromSeveralCandidates) {
  const auto plan = plan_builds({{1, "k1", 0}, {2, "k2", 0}, {3, "k1", 0}, {4, "k1", 1}}, {});
  ASSERT_EQ(plan.run.size(), 2u);
  EXPECT_EQ(plan.run[0].key, "k1");
  EXPECT_EQ(plan.run[0].candidates, (std::vector<BuildNeed>{{1, "k1", 0}, {3, "k1", 0}, {4, "k1", 1}}));
  EXPECT_EQ(plan.run[1].key, "k2");
  EXPECT_EQ(plan.run[1].candidates, (std::vector<BuildNeed>{{2, "k2", 0}}));
  EXPECT_TRUE(plan.shared.empty());
}

TEST(BuildPlan, AKnownBuildIsSharedNeverRunAgain) {
  // k1 built for candidate 0 (succeeded, folder still there); k2's build failed for candidate 5.
  const auto plan = plan_builds({{1, "k1", 0}, {2, "k2", 0}, {3, "k3", 0}},
                                {{"k1", KnownBuild{0, true}}, {"k2", KnownBuild{5, false}}});
  ASSERT_EQ(plan.run.size(), 1u);
  EXPECT_EQ(plan.run[0].key, "k3");
  ASSERT_EQ(plan.shared.size(), 2u);
  EXPECT_EQ(plan.shared[0].need.candidate, 1);
  EXPECT_EQ(plan.shared[0].from, 0);
  EXPECT_EQ(plan.shared[1].need.candidate, 2);
  EXPECT_EQ(plan.shared[1].from, 5);
}

const char* kBuild = R"([intent]
objective = gflops
baseline = opt=2 block=32
[space]
param = opt: int: 0,2,3
param = block: int: 16,32
[build]
command = c++ -O{opt} -DBLOCK={block} -o {build_dir}/kernel kernel.cpp
[explore]
command = {build_dir}/kernel --block {block}
[evaluate]
command = {build_dir}/kernel --check
)";

class BuildSettingsTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(m_dir); }
  std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
      load(text, overrides);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  }
  Settings load(const std::string& text, const std::vector<std::string>& overrides = {}) {
    std::filesystem::create_directories(m_dir);
    const auto path = m_dir / "b.ini";
    std::ofstream(path) << text;
    return load_settings(path, overrides);
  }
  static std::string replace(std::string text, const std::string& from, const std::string& to) {
    auto pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    return text.replace(pos, from.size(), to);
  }
  const std::filesystem::path m_dir =
      std::filesystem::temp_directory_path() / ("flotilla_build_test." + std::to_string(::getpid()));
};

TEST_F(BuildSettingsTest, ReadsTheBuildSection) {
  auto s = load(kBuild, {"--build.timeout=90s", "--build.parallel=3", "--build.dir=/data/builds"});
  EXPECT_EQ(s.build_command, "c++ -O{opt} -DBLOCK={block} -o {build_dir}/kernel kernel.cpp");
  EXPECT_EQ(s.build_timeout, std::chrono::seconds(90));
  EXPECT_EQ(s.build_parallel, 3u);
  EXPECT_EQ(s.build_root, "/data/builds");
  EXPECT_NE(s.fingerprint().find("build.command = c++ -O{opt}"), std::string::npos);
  // Defaults: ten minutes, the CPUs, RESULTS.builds.
  auto d = load(kBuild);
  EXPECT_EQ(d.build_timeout, std::chrono::minutes(10));
  EXPECT_EQ(d.build_parallel, 0u);
  EXPECT_EQ(d.build_root, std::filesystem::absolute("b.h5.builds"));
  EXPECT_TRUE(d.warnings.empty());
}

TEST_F(BuildSettingsTest, PlaceholderErrorsNameFileLineAndKey) {
  EXPECT_EQ(error_of(replace(kBuild, "-DBLOCK={block}", "-DBLOCK={blok}")),
            "b.ini:8: [build] command: unknown placeholder {blok} (known: block, build_dir, opt)");
  // A build is per key, not per candidate.
  EXPECT_EQ(error_of(replace(kBuild, "kernel.cpp\n", "kernel.cpp {candidate}\n")),
            "b.ini:8: [build] command: unknown placeholder {candidate} (known: block, build_dir, opt)");
  // Without a build, no command has a {build_dir}.
  EXPECT_EQ(error_of(replace(kBuild, "[build]\ncommand = c++ -O{opt} -DBLOCK={block} -o {build_dir}/kernel kernel.cpp\n", "")),
            "b.ini:8: [explore] command: unknown placeholder {build_dir} (known: block, candidate, opt, repeat)");
  EXPECT_EQ(error_of(kBuild, {"--build.timeout=soon"}),
            "command line: [build] timeout: 'soon' is not a duration (e.g. 500ms, 20s, 2m, 1h; 0 = none)");
  EXPECT_EQ(error_of(replace(kBuild, "[build]\ncommand = c++ -O{opt} -DBLOCK={block} -o {build_dir}/kernel kernel.cpp\n",
                             "[build]\ndir = /data\n")),
            "b.ini:8: [build] dir: '/data' needs [build] command");
  EXPECT_EQ(error_of(replace(kBuild, "kernel.cpp\n", "kernel.cpp # {opt}\n")),
            "b.ini:8: [build] command: the comment after '#' holds a placeholder ('{opt}'): a '#' after a blank "
            "starts a comment; write \\# if it belongs to the command");
}

TEST_F(BuildSettingsTest, WarnsOfABuildFolderTheNodesMayNotShare) {
  auto s = load(kBuild, {"--resources.backend=slurm", "--build.dir=/tmp/builds"});
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0], "b.ini: the build folder /tmp/builds is under /tmp, which the nodes of a Slurm job usually "
                           "do not share with this host: set [build] dir to a shared file system");
  EXPECT_TRUE(load(kBuild, {"--build.dir=/tmp/builds"}).warnings.empty());  // local: one host
}


// [build] env: rendered like explore's, part of the build key, checked like every template.
TEST_F(BuildSettingsTest, EnvLinesArePartOfTheBuildKey) {
  auto s = load(kBuild, {"--build.env=CXXFLAGS=-march={block}"});
  ASSERT_EQ(s.build_env.size(), 1u);
  EXPECT_EQ(s.build_env[0], (std::pair<std::string, std::string>{"CXXFLAGS", "-march={block}"}));
  EXPECT_EQ(s.build_template(), s.build_command + "\nenv CXXFLAGS=-march={block}");
  // Without env lines the key is the command's alone: builds recorded before env existed still count.
  EXPECT_EQ(load(kBuild).build_template(), s.build_command);
  // A parameter only the env names separates builds.
  EXPECT_EQ(error_of(kBuild, {"--build.env=OMP_NUM_THREADS={threads}"}),
            "command line: [build] env: 'OMP_NUM_THREADS={threads}' unknown placeholder {threads} (known: block, "
            "build_dir, opt)");
  const auto a = build_key(s.build_template(), {{"opt", "2"}, {"block", "32"}});
  EXPECT_NE(a, build_key(s.build_template(), {{"opt", "2"}, {"block", "64"}}));
  EXPECT_NE(a, build_key(load(kBuild).build_template(), {{"opt", "2"}, {"block", "32"}}));
  EXPECT_EQ(error_of(kBuild, {"--build.env=FLOTILLA_X=1"}),
            "command line: [build] env: 'FLOTILLA_X=1' sets a variable flotilla sets itself (FLOTILLA_*)");
  EXPECT_EQ(error_of(replace(kBuild, "[build]\ncommand = c++ -O{opt} -DBLOCK={block} -o {build_dir}/kernel kernel.cpp\n",
                             "[build]\nenv = A=1\n")),
            "b.ini:8: [build] env: 'A=1' needs [build] command");
}


// build.on: builds are Slurm jobs of their own by default with the slurm backend, on
// [resources.build] (one node, no GPUs unless said); elsewhere they run on this host.
TEST_F(BuildSettingsTest, WhereBuildsRun) {
  EXPECT_FALSE(load(kBuild).build_jobs);
  auto slurm = load(kBuild, {"--resources.backend=slurm", "--resources.gpus_per_node=4", "--resources.nodes=2",
                             "--resources.build.partition=cpu", "--resources.build.time_limit=20m"});
  EXPECT_TRUE(slurm.build_jobs);
  EXPECT_EQ(build_slurm_of(slurm).stage("build").partition, "cpu");
  EXPECT_EQ(build_slurm_of(slurm).stage("build").nodes, 1);
  EXPECT_EQ(build_slurm_of(slurm).stage("build").gpus_per_node, 0);
  EXPECT_EQ(build_slurm_of(slurm).stage("build").time_limit, std::chrono::minutes(20));
  EXPECT_EQ(build_slurm_of(slurm).stage("explore").gpus_per_node, 4);  // the others keep resources.*
  EXPECT_EQ(build_slurm_of(load(kBuild, {"--resources.backend=slurm", "--resources.build.gpus_per_node=1"})).stage("build").gpus_per_node, 1);
  EXPECT_FALSE(load(kBuild, {"--resources.backend=slurm", "--build.on=host"}).build_jobs);
  EXPECT_EQ(error_of(kBuild, {"--build.on=job"}),
            "command line: [build] on: 'job' = job needs resources.backend = slurm (it is local)");
  EXPECT_EQ(error_of(kBuild, {"--build.on=cluster"}), "command line: [build] on: 'cluster' is not auto, host or job");
}


// Candidates that share a key built earlier get copies of its trial. `trials` is the caller's
// own list, which record() appends to: the copies must be made before the first append moves
// the list (ASan, in CI's unit stage, reported the read of the moved list as a use after free).
TEST_F(BuildSettingsTest, SharedBuildsAreCopiedBeforeAnyIsRecorded) {
  auto s = load(kBuild, {"--build.dir=" + (m_dir / "builds").string()});
  const Values values{{"opt", "2"}, {"block", "32"}};
  BuildStage stage(s, [] () -> std::unique_ptr<flotilla::jobs::Backend> {
    ADD_FAILURE() << "no build should run: every candidate shares the recorded one";
    return nullptr;
  });
  std::filesystem::create_directories(stage.folder(values));
  std::vector<flotilla::results::TrialRecord> trials{
      {.candidate = 0, .kind = flotilla::results::TrialKind::build, .status = flotilla::results::TrialStatus::ok,
       .reason = std::string(200, 'r'), .output_tail = std::string(900, 'o')}};
  trials.shrink_to_fit();  // the first append moves it
  stage.run({1, 2, 3}, trials, [&](std::int64_t) { return values; },
            [&](flotilla::results::TrialRecord t) { trials.push_back(std::move(t)); }, [] { return false; },
            [] { return true; });
  ASSERT_EQ(trials.size(), 4u);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(trials[i].candidate, static_cast<std::int64_t>(i));
    EXPECT_EQ(trials[i].output_tail, std::string(900, 'o'));
    ASSERT_EQ(trials[i].metrics.size(), 1u);
    EXPECT_EQ(trials[i].metrics[0].name, "built_by");
    EXPECT_EQ(trials[i].metrics[0].value, 0);
  }
}

}  // namespace

// A build job's folder is emptied on its node just before the build starts, by the process runner
// there (TaskSpec::fresh_dir, through the job's manifest): no `sh -c` in front of the build. Run
// on the Slurm backend over the fake Slurm, whose jobs start their tasks as flotilla-worker does.
TEST_F(BuildSettingsTest, ABuildJobsFolderIsEmptiedWhereItRunsWithoutAShell) {
  auto s = load(replace(kBuild, "command = c++ -O{opt} -DBLOCK={block} -o {build_dir}/kernel kernel.cpp",
                        "command = ls -A {build_dir}"),
                {"--resources.backend=slurm", "--build.dir=" + (m_dir / "builds").string()});
  ASSERT_TRUE(s.build_jobs);
  flotilla::jobs::test::FakeSlurm slurm;
  BuildStage stage(s, [&] {
    return flotilla::jobs::test::make_fake_slurm_backend(
        slurm, {.name = "slurm"}, flotilla::jobs::test::fake_slurm_resources(m_dir / "jobs", 1));
  });
  const Values values{{"opt", "2"}, {"block", "32"}};
  const auto folder = stage.folder(values);
  std::filesystem::create_directories(folder / "obj");
  std::ofstream(folder / "obj" / "kernel.o") << "left by a killed build\n";
  std::vector<flotilla::results::TrialRecord> trials;
  stage.run({0}, {}, [&](std::int64_t) { return values; },
            [&](flotilla::results::TrialRecord t) { trials.push_back(std::move(t)); }, [] { return false; },
            [] { return true; });
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].status, flotilla::results::TrialStatus::ok) << trials[0].reason;
  EXPECT_EQ(trials[0].output_tail, "");  // `ls -A` of the folder found it empty
  EXPECT_TRUE(std::filesystem::is_directory(folder));
  EXPECT_FALSE(std::filesystem::exists(folder / "obj"));
  ASSERT_EQ(slurm.submitted().size(), 1u);
  std::ifstream manifest(slurm.submitted()[0].workdir / "manifest.json");  // the job's folder
  const std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  // The build's own words, as arguments of the fixed script that keeps its whole output in
  // BUILD_DIR.log (BuildStage.cpp, logged): no shell parses them, and none empties the folder.
  EXPECT_NE(text.find(R"("argv":["sh","-c","log=$0; \"$@\" > \"$log\" 2>&1; status=$?; tail -c 1000 \"$log\"; exit $status",)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(.log","ls","-A",)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("fresh_dir":)"), std::string::npos) << text;
}

// Hostile input: two campaigns sharing build.dir overwrote each other's builds (campaign A's
// candidate recorded 10, 99, 99 after B rebuilt the same key from changed sources). A build
// folder belongs to one campaign, and the sources a build reads are part of its key.
TEST_F(BuildSettingsTest, InputsContentJoinsTheKeyAndTheFingerprint) {
  const auto src = m_dir / "src";
  std::filesystem::create_directories(src / "sub");
  std::ofstream(src / "kernel.cpp") << "int main() { return 0; }\n";
  std::ofstream(src / "sub" / "helper.h") << "#pragma once\n";
  const auto workdir = "--campaign.workdir=" + m_dir.string();
  auto a = load(kBuild, {workdir, "--build.inputs=src"});
  EXPECT_EQ(a.build_inputs, std::vector<std::string>{"src"});
  EXPECT_EQ(a.build_inputs_digest.size(), 16u);
  EXPECT_NE(a.fingerprint().find("build.inputs = src (content " + a.build_inputs_digest + ")"), std::string::npos);
  const auto key = build_key(a.build_template(), {{"opt", "2"}, {"block", "32"}});
  // The same command and values over changed sources: another key, another folder, a refused resume.
  std::ofstream(src / "sub" / "helper.h") << "#pragma once\n#define FAST 1\n";
  auto b = load(kBuild, {workdir, "--build.inputs=src"});
  EXPECT_NE(a.build_inputs_digest, b.build_inputs_digest);
  EXPECT_NE(key, build_key(b.build_template(), {{"opt", "2"}, {"block", "32"}}));
  const auto change = fingerprint_change(a.fingerprint(), b.fingerprint());
  ASSERT_TRUE(change);
  EXPECT_NE(change->find("build.inputs changed from"), std::string::npos) << *change;
  // Unchanged sources: the same digest (a folder is walked in name order).
  EXPECT_EQ(b.build_inputs_digest, load(kBuild, {workdir, "--build.inputs=src"}).build_inputs_digest);
  EXPECT_EQ(error_of(kBuild, {workdir, "--build.inputs=src missing.cpp"}),
            "command line: [build] inputs: 'src missing.cpp' cannot be read: 'missing.cpp' does not exist");
}

TEST(BuildRoot, BelongsToOneCampaign) {
  const auto root = std::filesystem::temp_directory_path() / ("flotilla_build_root." + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  claim_build_root(root, "/work/a.h5");
  EXPECT_NO_THROW(claim_build_root(root, "/work/a.h5"));  // a resume of the same campaign
  try {
    claim_build_root(root, "/work/b.h5");
    FAIL() << "a second campaign was given the first one's build folder";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to another campaign (/work/a.h5)"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(root);
}
