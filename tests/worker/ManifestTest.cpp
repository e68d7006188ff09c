// ManifestTest.cpp — manifest JSON <-> struct, its error messages, and which TaskSpecs become
// in-process kernel tasks.
#include <gtest/gtest.h>

#include <fstream>

#include "BackendTestUtil.h"
#include "flotilla/jobs/Manifest.h"

namespace flotilla::jobs {
namespace {

using namespace std::chrono_literals;

Manifest sample() {
  Manifest manifest{"campaign-3", "campaign-3.h5", {}};
  manifest.tasks.push_back(
      {4096, 0, CommandTask{{"sh", "-c", "echo 'a b'"}, 60s, {{"OMP_NUM_THREADS", "1"}}, "/tmp", "gflops"}});
  manifest.tasks.push_back({8388608, 2,
                            KernelTask{"stencil",
                                       {{"tile_x", "16"}, {"precision", "float"}},
                                       KernelMode::verify,
                                       1,
                                       4,
                                       30s,
                                       "",
                                       {"flotilla-kernel", "stencil", "--tile-x", "16"}}});
  manifest.tasks.push_back({7, 0, KernelTask{"sleep", {}, KernelMode::benchmark, 0, 1, 0ms, "time_s", {}}});
  return manifest;
}

void expect_same(const Manifest& a, const Manifest& b) {
  EXPECT_EQ(a.job, b.job);
  EXPECT_EQ(a.output, b.output);
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  for (std::size_t i = 0; i < a.tasks.size(); ++i) {
    EXPECT_EQ(a.tasks[i].id, b.tasks[i].id);
    EXPECT_EQ(a.tasks[i].attempt, b.tasks[i].attempt);
    ASSERT_EQ(a.tasks[i].work.index(), b.tasks[i].work.index());
    if (const auto* c = std::get_if<CommandTask>(&a.tasks[i].work)) {
      const auto& d = std::get<CommandTask>(b.tasks[i].work);
      EXPECT_EQ(c->argv, d.argv);
      EXPECT_EQ(c->timeout, d.timeout);
      EXPECT_EQ(c->env, d.env);
      EXPECT_EQ(c->workdir, d.workdir);
      EXPECT_EQ(c->objective, d.objective);
      EXPECT_EQ(c->fresh_dir, d.fresh_dir);
    } else {
      const auto& k = std::get<KernelTask>(a.tasks[i].work);
      const auto& l = std::get<KernelTask>(b.tasks[i].work);
      EXPECT_EQ(k.family, l.family);
      EXPECT_EQ(k.params, l.params);
      EXPECT_EQ(k.mode, l.mode);
      EXPECT_EQ(k.shard, l.shard);
      EXPECT_EQ(k.shards, l.shards);
      EXPECT_EQ(k.timeout, l.timeout);
      EXPECT_EQ(k.objective, l.objective);
      EXPECT_EQ(k.argv, l.argv);
    }
  }
}

std::string error_of(std::string_view json) {
  try {
    (void)manifest_from_json(json, "job.json");
  } catch (const ManifestError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Manifest, JsonRoundTrip) {
  const Manifest manifest = sample();
  expect_same(manifest, manifest_from_json(manifest_to_json(manifest), "job.json"));
}

// TaskSpec::fresh_dir reaches the node that empties it (a build job's folder).
// Strings a task can carry: quotes, a backslash, control characters, DEL, UTF-8, bytes that are
// not UTF-8 (replaced by U+FFFD, as nlohmann's dump does), and an environment variable given twice
// (the later value, in the first one's place).
Manifest tricky() {
  Manifest manifest{"job \"3\"", "out\\put.h5", {}};
  manifest.tasks.push_back({1, 0,
                            CommandTask{{"sh", "-c", "printf 'a\tb\n' \x01\x7f", "caf\xc3\xa9", "bad \xff\xfe byte"},
                                        1500ms,
                                        {{"A", "1"}, {"B", "two words"}, {"A", "3"}},
                                        "/tmp/dir with space",
                                        "time_s",
                                        ""}});
  manifest.tasks.push_back({18446744073709551615ull, 7,
                            KernelTask{"sleep", {{"us", "0"}, {"a\"b", "\\"}}, KernelMode::verify, 2, 3, 0ms, "", {}}});
  return manifest;
}

// The manifest's text, line by line: the worker and a person reading job folders see the same
// format whichever code writes it (it was nlohmann's dump of each task; now written directly,
// bench/scale). The lines below are that dump's text for tricky(), kept from before the change.
TEST(Manifest, TheTextIsTheSameAsNlohmannsDump) {
  const std::string text = manifest_to_json(tricky());
  const std::string expected =
      "{\"flotilla_manifest\":1,\"job\":\"job \\\"3\\\"\",\"output\":\"out\\\\put.h5\", \"tasks\": [\n"
      " {\"id\":1,\"attempt\":0,\"kind\":\"command\",\"argv\":[\"sh\",\"-c\",\"printf 'a\\tb\\n' \\u0001\x7f\","
      "\"caf\xc3\xa9\",\"bad \xef\xbf\xbd\xef\xbf\xbd byte\"],\"timeout_ms\":1500,"
      "\"env\":{\"A\":\"3\",\"B\":\"two words\"},"
      "\"workdir\":\"/tmp/dir with space\",\"objective\":\"time_s\"},\n"
      " {\"id\":18446744073709551615,\"attempt\":7,\"kind\":\"kernel\",\"family\":\"sleep\","
      "\"params\":{\"a\\\"b\":\"\\\\\","
      "\"us\":\"0\"},\"mode\":\"verify\",\"shard\":2,\"shards\":3,\"timeout_ms\":0,\"objective\":\"\"}\n"
      "]}\n";
  EXPECT_EQ(text, expected);
  EXPECT_EQ(manifest_to_json(sample()), manifest_to_json(manifest_from_json(manifest_to_json(sample()), "job.json")));
}

TEST(Manifest, AFreshDirRoundTrips) {
  Manifest manifest{"campaign-3-build", "campaign-3-build.h5", {}};
  manifest.tasks.push_back({4097, 1, CommandTask{{"make"}, 0ms, {}, "/work", "", "/work/builds/a1b2"}});
  const Manifest back = manifest_from_json(manifest_to_json(manifest), "job.json");
  expect_same(manifest, back);
  EXPECT_EQ(std::get<CommandTask>(back.tasks[0].work).fresh_dir, "/work/builds/a1b2");
}

TEST(Manifest, DefaultsForOptionalFields) {
  const Manifest m = manifest_from_json(
      R"({"flotilla_manifest": 1, "job": "j", "output": "j.h5", "tasks": [
            {"id": 1, "kind": "command", "argv": ["true"]},
            {"id": 2, "kind": "kernel", "family": "sleep"}]})",
      "job.json");
  ASSERT_EQ(m.tasks.size(), 2u);
  EXPECT_EQ(m.tasks[0].attempt, 0);
  EXPECT_EQ(std::get<CommandTask>(m.tasks[0].work).timeout, 0ms);
  EXPECT_TRUE(std::get<CommandTask>(m.tasks[0].work).fresh_dir.empty());
  const auto& kernel = std::get<KernelTask>(m.tasks[1].work);
  EXPECT_EQ(kernel.mode, KernelMode::benchmark);
  EXPECT_EQ(kernel.shards, 1);
  EXPECT_TRUE(kernel.params.empty());
}

TEST(Manifest, ErrorsNameTheFileAndField) {
  const std::string head = R"({"flotilla_manifest": 1, "job": "j", "output": "j.h5", "tasks": )";
  EXPECT_EQ(error_of(head + R"([{"id": 1, "kind": "shell", "argv": ["x"]}]})"),
            R"(job.json: tasks[0].kind: expected "command" or "kernel", got "shell")");
  EXPECT_EQ(
      error_of(head + R"([{"id": 1, "kind": "command", "argv": ["x"]}, {"id": 2, "kind": "command", "argvs": []}]})"),
      "job.json: tasks[1]: missing field 'argv'");
  EXPECT_EQ(error_of(head + R"([{"id": 1, "kind": "command", "argv": ["x"], "timeout": 5}]})"),
            "job.json: tasks[0]: unknown field 'timeout'");
  EXPECT_EQ(error_of(head + R"([{"id": 1, "kind": "command", "argv": []}]})"),
            "job.json: tasks[0].argv: must not be empty");
  EXPECT_EQ(error_of(head + R"([{"id": 1, "kind": "command", "argv": ["x", 3]}]})"),
            "job.json: tasks[0].argv[1]: expected a string, got number");
  EXPECT_EQ(error_of(head + R"([{"id": -1, "kind": "command", "argv": ["x"]}]})"),
            "job.json: tasks[0].id: expected a non-negative integer, got -1");
  EXPECT_EQ(error_of(head + R"([{"id": 1, "kind": "kernel", "family": "stencil", "shard": 4, "shards": 4}]})"),
            "job.json: tasks[0].shard: 4 is out of range [0, 3]");
  EXPECT_EQ(error_of(head + R"([{"id": 1, "kind": "kernel", "family": "stencil", "params": {"tile_x": 8}}]})"),
            "job.json: tasks[0].params.tile_x: expected a string, got number");
  EXPECT_EQ(error_of(R"({"flotilla_manifest": 2, "job": "j", "output": "j.h5", "tasks": []})"),
            "job.json: flotilla_manifest: version 2 is not supported (supports 1)");
  EXPECT_EQ(error_of(R"({"flotilla_manifest": 1, "job": "j", "tasks": []})"), "job.json: missing field 'output'");
  EXPECT_EQ(error_of(R"([1, 2])"), "job.json: expected an object, got array");
  EXPECT_TRUE(error_of("{not json").starts_with("job.json: not JSON: ")) << error_of("{not json");
}

// fuzz_manifest (tests/fuzz/fuzz_manifest/regressions/number_overflow.json): a number beyond
// a double is nlohmann's out_of_range, not a parse_error, and escaped manifest_from_json.
TEST(Manifest, NumberBeyondADoubleIsNotJson) {
  EXPECT_EQ(error_of(R"({"flotilla_manifest": 1, "job": "j", "output": "j.h5", "tasks": [{"id": 1e999}]})"),
            "job.json: not JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'");
}

TEST(Manifest, FilesResolveTheOutputAgainstTheManifestsDirectory) {
  test::ScratchDir dir;
  const auto path = dir.path() / "m.json";
  write_manifest(path, sample());
  const Manifest back = read_manifest(path);
  EXPECT_EQ(back.output, dir.path() / "campaign-3.h5");
  EXPECT_EQ(back.tasks.size(), 3u);
  EXPECT_THROW(read_manifest(dir.path() / "missing.json"), ManifestError);
  try {
    (void)read_manifest(dir.path() / "missing.json");
  } catch (const ManifestError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir.path() / "missing.json").string() + ": cannot open: No such file or directory");
  }
}

TaskSpec spec_of(std::vector<std::string> argv) {
  TaskSpec spec;
  spec.id = 42;
  spec.attempt = 1;
  spec.argv = std::move(argv);
  spec.timeout = 5s;
  spec.objective = "gflops";
  return spec;
}

TEST(ManifestTask, KernelCommandsBecomeInProcessKernelTasks) {
  const auto argv = std::vector<std::string>{"flotilla-kernel", "stencil", "--tile-x", "8",        "--unroll=2",
                                             "--verify",        "--shard", "1",        "--shards", "4"};
  const ManifestTask task = to_manifest_task(spec_of(argv));
  EXPECT_EQ(task.id, 42u);
  EXPECT_EQ(task.attempt, 1);
  const auto* kernel = std::get_if<KernelTask>(&task.work);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->family, "stencil");
  EXPECT_EQ(kernel->params, (std::map<std::string, std::string>{{"tile_x", "8"}, {"unroll", "2"}}));
  EXPECT_EQ(kernel->mode, KernelMode::verify);
  EXPECT_EQ(kernel->shard, 1);
  EXPECT_EQ(kernel->shards, 4);
  EXPECT_EQ(kernel->timeout, 5s);
  EXPECT_EQ(kernel->objective, "gflops");
  EXPECT_EQ(kernel->argv, argv);  // the fallback
  EXPECT_TRUE(
      std::holds_alternative<KernelTask>(to_manifest_task(spec_of({"/opt/bin/flotilla-kernel", "sleep"})).work));
}

TEST(ManifestTask, AnythingTheExecutableMightReadDifferentlyStaysACommand) {
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"flotilla-kernel", "list"},
           {"flotilla-kernel", "stencil", "--help"},
           {"flotilla-kernel", "stencil", "--shard", "1"},  // needs --verify: a usage error
           {"flotilla-kernel", "stencil", "--tile-x", "8", "--tile-x", "16"},
           {"flotilla-kernel", "stencil", "--tile-x"},
           {"flotilla-kernel", "stencil", "--tile-x", "-8"},
           {"flotilla-kernel", "stencil", "-t", "8"},
           {"flotilla-kernel", "stencil", "--verify", "--shard", "x"},
           {"flotilla-kernel", "stencil", "--verify", "--shard", "4", "--shards", "4"},
           {"flotilla-kernel", "Stencil"},
           {"flotilla-kernels", "stencil"},
           {"sh", "-c", "flotilla-kernel stencil"}}) {
    EXPECT_TRUE(std::holds_alternative<CommandTask>(to_manifest_task(spec_of(argv)).work)) << argv.back();
  }
  TaskSpec with_env = spec_of({"flotilla-kernel", "stencil"});
  with_env.env = {{"OMP_NUM_THREADS", "2"}};
  const auto task = to_manifest_task(with_env);
  ASSERT_TRUE(std::holds_alternative<CommandTask>(task.work));
  EXPECT_EQ(std::get<CommandTask>(task.work).env, with_env.env);
  // A folder to empty first is work the process runner does: never an in-process kernel.
  TaskSpec with_fresh_dir = spec_of({"flotilla-kernel", "stencil"});
  with_fresh_dir.fresh_dir = "/work/builds/a1b2";
  const auto fresh = to_manifest_task(with_fresh_dir);
  ASSERT_TRUE(std::holds_alternative<CommandTask>(fresh.work));
  EXPECT_EQ(to_task_spec(1, 0, std::get<CommandTask>(fresh.work)).fresh_dir, with_fresh_dir.fresh_dir);
}

}  // namespace
}  // namespace flotilla::jobs
