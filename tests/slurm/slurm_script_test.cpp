// Pure parts of the Slurm layer: job scripts, states, array splitting, recorded command output.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "flotilla/jobs/Command.h"
#include "flotilla/jobs/Slurm.h"
#include "flotilla/jobs/Subprocess.h"

using namespace flotilla::jobs;

TEST(JobScript, IsReadableAndComplete) {
  JobRequest r{.name = "quickstart-explore-3", .partition = "gb200", .nodes = 2, .ranks_per_node = 4,
               .gpus_per_node = 4, .time_limit = std::chrono::minutes(90), .account = "perf", .qos = "normal",
               .dependency = "afterok:41", .array = "0-7", .workdir = "/scratch/c", .output = "/scratch/c/job-%j.out",
               .comments = {"explore round 3: 8 candidates x 3 repeats"},
               .exports = {{"FLOTILLA_JOB", "explore 3"}},
               .commands = {"srun --mpi=pmix flotilla-worker manifest.json"}};
  EXPECT_EQ(render_job_script(r),
            "#!/bin/bash\n"
            "#SBATCH --job-name=quickstart-explore-3\n"
            "#SBATCH --partition=gb200\n"
            "#SBATCH --nodes=2\n"
            "#SBATCH --ntasks-per-node=4\n"
            "#SBATCH --gpus-per-node=4\n"
            "#SBATCH --time=1:30:00\n"
            "#SBATCH --account=perf\n"
            "#SBATCH --qos=normal\n"
            "#SBATCH --dependency=afterok:41\n"
            "#SBATCH --kill-on-invalid-dep=yes\n"
            "#SBATCH --array=0-7\n"
            "#SBATCH --chdir=/scratch/c\n"
            "#SBATCH --output=/scratch/c/job-%j.out\n"
            "\n"
            "# explore round 3: 8 candidates x 3 repeats\n"
            "\n"
            "set -euo pipefail\n"
            "export FLOTILLA_JOB='explore 3'\n"
            "srun --mpi=pmix flotilla-worker manifest.json\n");
}

TEST(JobState, NamesRoundTripAndTerminality) {
  for (auto s : {JobState::pending, JobState::running, JobState::completed, JobState::node_fail, JobState::timeout})
    EXPECT_EQ(job_state_from_name(to_string(s)), s);
  EXPECT_EQ(job_state_from_name("SUSPENDED"), JobState::unknown);
  EXPECT_FALSE(is_terminal(JobState::pending));
  EXPECT_FALSE(is_terminal(JobState::running));
  EXPECT_TRUE(is_terminal(JobState::preempted));
}

TEST(Array, SplitAtMaxArraySize) {
  using R = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  EXPECT_EQ(split_array(2500, 1001), (R{{0, 1000}, {1001, 2001}, {2002, 2499}}));
  EXPECT_EQ(split_array(10, 1001), (R{{0, 9}}));
  EXPECT_EQ(split_array(0, 1001), R{});
}

// Array indices stay below MaxArraySize: elements 0..2499 with MaxArraySize 1001 become three
// arrays (offsets 0, 1001, 2002), each numbered from 0; gaps (recorded shards) stay out.
TEST(Array, PiecesNumberedBelowMaxArraySize) {
  std::vector<std::uint32_t> all(2500);
  for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  auto pieces = plan_array_pieces(all, 1001);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].offset, 0u);
  EXPECT_EQ(pieces[0].spec, "0-1000");
  EXPECT_EQ(pieces[1].offset, 1001u);
  EXPECT_EQ(pieces[1].spec, "0-1000");
  EXPECT_EQ(pieces[2].offset, 2002u);
  EXPECT_EQ(pieces[2].spec, "0-497");
  EXPECT_EQ(pieces[2].elements.size(), 498u);
  auto gaps = plan_array_pieces({0, 1, 2, 5, 7, 8, 9, 1001, 1003}, 1001);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].spec, "0-2,5,7-9");
  EXPECT_EQ(gaps[1].spec, "0,2");
  EXPECT_TRUE(plan_array_pieces({}, 1001).empty());
  EXPECT_EQ(plan_array_pieces({3}, 4).front().spec, "3");
}

// A job that depends on another renders --dependency with --kill-on-invalid-dep, and an array
// writes one output file per element.
TEST(JobScript, ArrayWithDependency) {
  JobRequest r{.name = "c-1-2", .dependency = "afterok:17", .array = "0-2", .output = "/j/slurm-%A_%a.out",
               .commands = {"srun --mpi=pmix flotilla-worker manifest-${SLURM_ARRAY_TASK_ID}.json"}};
  auto script = render_job_script(r);
  EXPECT_NE(script.find("#SBATCH --dependency=afterok:17\n#SBATCH --kill-on-invalid-dep=yes\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --array=0-2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --output=/j/slurm-%A_%a.out\n"), std::string::npos) << script;
}

TEST(CommandOutput, SbatchParsable) {
  EXPECT_EQ(parse_sbatch_parsable("123\n"), 123u);
  EXPECT_EQ(parse_sbatch_parsable("77;cluster\n"), 77u);
  EXPECT_FALSE(parse_sbatch_parsable("sbatch: error: Batch job submission failed"));
  EXPECT_FALSE(parse_sbatch_parsable(""));
}

TEST(CommandOutput, SqueueJson2205) {
  std::ifstream in(FLOTILLA_TEST_DATA "/squeue-22.05.json");
  std::stringstream text;
  text << in.rdbuf();
  auto jobs = parse_squeue_json(text.str());
  ASSERT_EQ(jobs.size(), 6u);
  EXPECT_EQ(jobs[0].id, 1u);
  EXPECT_EQ(jobs[0].state, JobState::running);
  EXPECT_FALSE(jobs[0].array_task_id);
  EXPECT_EQ(jobs[1].array_job_id, 2u);
  EXPECT_EQ(jobs[1].array_task_id, 0u);
  EXPECT_EQ(jobs[4].reason, "DependencyNeverSatisfied");
  EXPECT_EQ(jobs[5].state, JobState::node_fail);
  EXPECT_THROW(parse_squeue_json("squeue: error"), std::exception);
}

// fuzz_slurm (tests/fuzz/fuzz_slurm/regressions/): output squeue would never write raised
// nlohmann's exceptions, or wrapped a job id of -1 or 2^32 + 1 into another job's id.
TEST(CommandOutput, SqueueJsonErrorsNameTheField) {
  const auto error_of = [](std::string_view json) {
    try {
      parse_squeue_json(json);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("squeue: error"), "squeue --json: the output is not JSON");
  EXPECT_EQ(error_of(""), "squeue --json: the output is not JSON");
  EXPECT_EQ(error_of(R"({"jobs": 5})"), "squeue --json: the output has no 'jobs' list");
  EXPECT_EQ(error_of(R"([{"job_id": 1}])"), "squeue --json: the output has no 'jobs' list");
  EXPECT_EQ(error_of(R"({"jobs": [{"job_id": 1}, 7]})"), "squeue --json: jobs[1]: expected an object");
  EXPECT_EQ(error_of(R"({"jobs": [{"job_state": "RUNNING"}]})"), "squeue --json: jobs[0]: no job_id");
  EXPECT_EQ(error_of(R"({"jobs": [{"job_id": -1}]})"),
            "squeue --json: jobs[0].job_id: expected an unsigned 32-bit integer, got -1");
  EXPECT_EQ(error_of(R"({"jobs": [{"job_id": 1, "array_task_id": 4294967297}]})"),
            "squeue --json: jobs[0].array_task_id: expected an unsigned 32-bit integer, got 4294967297");
  EXPECT_EQ(error_of(R"({"jobs": [{"job_id": 1, "job_state": 3}]})"),
            "squeue --json: jobs[0]: [json.exception.type_error.302] type must be string, but is number");
  EXPECT_EQ(parse_squeue_json(R"({"jobs": [{"job_id": 4294967295, "array_task_id": null}]})").at(0).id, 4294967295u);
  // An exit code outside an int's range was converted with undefined behaviour (UBSan, fuzz_slurm).
  EXPECT_EQ(error_of(R"({"jobs": [{"job_id": 1, "exit_code": 1.8446744073709552e20}]})"),
            "squeue --json: jobs[0].exit_code: expected an integer, got 1.844674407370955e+20");
  EXPECT_EQ(error_of(R"({"jobs": [{"job_id": 1, "exit_code": 18446744073709551615}]})"),
            "squeue --json: jobs[0].exit_code: expected an integer, got 18446744073709551615");
  EXPECT_EQ(parse_squeue_json(R"({"jobs": [{"job_id": 1, "exit_code": -2}]})").at(0).exit_code, -2);
}

// MaxSubmitJobs counts a pending array's remaining elements one by one.
TEST(CommandOutput, ArrayExpressionSizeCountsElements) {
  EXPECT_EQ(array_expression_size("0-9"), 10u);
  EXPECT_EQ(array_expression_size("1,3,5-7"), 5u);
  EXPECT_EQ(array_expression_size("0-15:4"), 4u);   // 0, 4, 8, 12
  EXPECT_EQ(array_expression_size("0-99%10"), 100u);  // the throttle is not an element count
  EXPECT_EQ(array_expression_size("7"), 1u);
  EXPECT_EQ(array_expression_size(""), 1u);      // a record counts at least once
  EXPECT_EQ(array_expression_size("a-b"), 1u);
  EXPECT_EQ(array_expression_size("9-3"), 1u);
}

// The last line of defence: a value with a newline or a blank cannot become a second #SBATCH
// option or a shell line, and a comment with a newline stays one comment line.
TEST(JobScript, RefusesValuesThatWouldLeaveTheirLine) {
  JobRequest r{.name = "ok", .nodes = 1, .ranks_per_node = 1, .time_limit = std::chrono::minutes(5),
               .commands = {"true"}};
  auto with = [&](auto change) {
    JobRequest copy = r;
    change(copy);
    try {
      render_job_script(copy);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("rendered");
  };
  EXPECT_EQ(with([](JobRequest& x) { x.qos = "normal --wrap=id"; }),
            "job script: --qos value 'normal --wrap=id' holds a blank or a control character: it would not stay one "
            "#SBATCH option");
  EXPECT_EQ(with([](JobRequest& x) { x.name = "a\nid"; }),
            "job script: --job-name value 'a id' holds a blank or a control character: it would not stay one #SBATCH "
            "option");
  EXPECT_EQ(with([](JobRequest& x) { x.workdir = "/tmp/a b"; }).substr(0, 24), "job script: --chdir valu");
  JobRequest commented = r;
  commented.comments = {"first\nrm -rf /"};
  const auto script = render_job_script(commented);
  EXPECT_NE(script.find("# first rm -rf /\n"), std::string::npos) << script;
  EXPECT_EQ(shell_quote("/opt/my tools/flotilla-worker"), "'/opt/my tools/flotilla-worker'");
}

TEST(JobScript, PassThroughOptionsFollowFlotillasOwnAndAreNamed) {
  JobRequest r{.name = "c-1", .nodes = 1, .ranks_per_node = 2, .time_limit = std::chrono::minutes(5),
               .extra = {{"constraint", "gb200&ib"}, {"exclusive", ""}}, .commands = {"true"}};
  EXPECT_EQ(render_job_script(r),
            "#!/bin/bash\n"
            "#SBATCH --job-name=c-1\n"
            "#SBATCH --nodes=1\n"
            "#SBATCH --ntasks-per-node=2\n"
            "#SBATCH --time=0:05:00\n"
            "#SBATCH --constraint=gb200&ib\n"
            "#SBATCH --exclusive\n"
            "\n"
            "# the last 2 #SBATCH line(s) come from resources.sbatch: --constraint=gb200&ib --exclusive\n"
            "\n"
            "set -euo pipefail\n"
            "true\n");
}

TEST(JobScript, SetupLinesAreQuotedWordByWordAndNamedWhenTheyFail) {
  EXPECT_EQ(render_setup_line("module load cuda/12.4", 1),
            "set +u; module load cuda/12.4 || { echo 'flotilla: resources.setup line 1 failed: module load cuda/12.4' "
            ">&2; exit 1; }; set -u");
  // Shell syntax stays words: nothing after the ';' runs as a command of its own.
  EXPECT_EQ(render_setup_line("source \"my env.sh\"; rm -rf $HOME", 2),
            "set +u; source 'my env.sh;' rm -rf '$HOME' || { echo 'flotilla: resources.setup line 2 failed: source "
            "\"my env.sh\"; rm -rf $HOME' >&2; exit 1; }; set -u");
  EXPECT_THROW(render_setup_line("module load 'cuda", 1), CommandError);

  // Run for real: a line that fails ends the script with its line named, and later lines never run.
  const auto script = "set -euo pipefail\n" + render_setup_line("true ok", 1) + "\n" + render_setup_line("false x", 2) +
                      "\necho reached\n";
  SubprocessResult result = run_subprocess({.argv = {"bash", "-c", script}});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "flotilla: resources.setup line 2 failed: false x\n");
}

TEST(SbatchOptions, ParsedCheckedAndRenderedAsSbatchSpellsThem) {
  EXPECT_EQ(parse_sbatch_options("  --mem=64G\t--exclusive --mail-type=END,FAIL "),
            (std::vector<SbatchOption>{{"mem", "64G"}, {"exclusive", ""}, {"mail-type", "END,FAIL"}}));
  EXPECT_EQ(to_string(SbatchOption{"mem", "64G"}), "--mem=64G");
  EXPECT_EQ(to_string(SbatchOption{"exclusive", ""}), "--exclusive");
  EXPECT_TRUE(parse_sbatch_options("").empty());
  auto error = [](std::string_view text) {
    try {
      parse_sbatch_options(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error("--time=10"), "'--time' is set by flotilla for every job: use resources.time_limit");
  EXPECT_EQ(error("--output=x"), "'--output' is set by flotilla for every job, which depends on it (docs/slurm.md)");
  EXPECT_EQ(error("--exclusive=user"), "'--exclusive' takes no value");
  EXPECT_EQ(error("--constraint"), "'--constraint' needs a value (--constraint=VALUE)");
  EXPECT_EQ(error("--cpus-per-task=0"), "'--cpus-per-task=0': the value is not a CPU count from 1 to 65535");
  EXPECT_EQ(error("--mail-type=END,SOMETIMES").substr(0, 77),
            "'--mail-type=END,SOMETIMES': the value names 'SOMETIMES', which is not one of");
  EXPECT_EQ(error("--nice=abc"), "'--nice=abc': the value is not an integer within Slurm's nice range");
  EXPECT_EQ(error("constraint=x"), "'constraint=x' is not an option: write each as --name=value or --name (short forms "
                                   "such as -C are not read)");
}

TEST(SbatchOptions, MemoryAndTimeAsSlurmReadsThem) {
  EXPECT_EQ(parse_memory_mib("1024"), 1024u);
  EXPECT_EQ(parse_memory_mib("64G"), 64u * 1024);
  EXPECT_EQ(parse_memory_mib("500m"), 500u);
  EXPECT_EQ(parse_memory_mib("1T"), 1024u * 1024);
  EXPECT_EQ(parse_memory_mib("1500K"), 2u);  // rounded up
  EXPECT_EQ(parse_memory_mib("0"), 0u);      // Slurm: all of a node's memory
  EXPECT_FALSE(parse_memory_mib(""));
  EXPECT_FALSE(parse_memory_mib("G"));
  EXPECT_FALSE(parse_memory_mib("12X"));
  EXPECT_FALSE(parse_memory_mib("-1"));
  EXPECT_FALSE(parse_memory_mib("99999999999999T"));

  using std::chrono::minutes;
  EXPECT_EQ(parse_slurm_time("90"), minutes(90));
  EXPECT_EQ(parse_slurm_time("10:30"), minutes(11));  // MM:SS, rounded up
  EXPECT_EQ(parse_slurm_time("1:30:00"), minutes(90));
  EXPECT_EQ(parse_slurm_time("2-0"), minutes(2 * 24 * 60));
  EXPECT_EQ(parse_slurm_time("1-2:03"), minutes(26 * 60 + 3));
  EXPECT_EQ(parse_slurm_time("1-0:0:1"), minutes(24 * 60 + 1));
  EXPECT_FALSE(parse_slurm_time("0"));  // unlimited to Slurm
  EXPECT_FALSE(parse_slurm_time("UNLIMITED"));
  EXPECT_FALSE(parse_slurm_time("1:2:3:4"));
  EXPECT_FALSE(parse_slurm_time("1h"));
  EXPECT_FALSE(parse_slurm_time(""));
}

TEST(SbatchOptions, EnvironmentVariablesSortedByWhatBothClientsCanDo) {
  auto env = read_sbatch_environment({"PATH=/usr/bin", "SBATCH_PARTITION=gb200", "SBATCH_TIMELIMIT=1:00:00",
                                      "SBATCH_EXCLUSIVE=", "SBATCH_CONSTRAINT=ib", "SBATCH_JOB_NAME=mine",
                                      "SBATCH_HINT=nomultithread", "SBATCH_DEBUG=1", "SBATCH_MEM_PER_NODE=lots",
                                      "SLURM_CLUSTERS=a,b", "SLURM_JOB_ID=5", "SBATCH_NO_REQUEUE=1"});
  EXPECT_EQ(env.applied, (std::vector<SbatchOption>{{"partition", "gb200"}, {"time", "1:00:00"}, {"exclusive", ""},
                                                    {"constraint", "ib"}}));
  ASSERT_EQ(env.refused.size(), 2u);
  EXPECT_EQ(env.refused[0], "SBATCH_JOB_NAME: flotilla names its jobs (PREFIX-N) and finds them by name after a restart");
  EXPECT_EQ(env.refused[1].substr(0, 15), "SLURM_CLUSTERS:");
  EXPECT_EQ(env.unsupported, (std::vector<std::string>{"SBATCH_HINT"}));
  ASSERT_EQ(env.malformed.size(), 1u);
  EXPECT_EQ(env.malformed[0].substr(0, 31), "SBATCH_MEM_PER_NODE=lots: the v");
}
