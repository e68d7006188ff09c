// cost.cpp — flotilla's own cost per proposal (docs/propose.md), at 10 and 1,000 recorded
// candidates: what a round of proposals costs the scheduler, the proposer's own run left out.
//
//   propose_cost [--repeats N]
//
// For each size: a campaign of N recorded candidates (3 repeats and 2 shards each, half of
// them written by proposers with chains up to 8 deep) is summarised, the context a proposer reads
// is built and written, one proposal is judged (checked, deduplicated, its configuration made,
// applied to a copy of its parent's tree) and its chain's tree is made. Each step is timed over
// N repeats (median and min..max), next to a baseline measured in the same run: copying the
// source tree once (the least any proposal costs: its tree must exist). One JSON line at the end.
// The correctness half: the proposal is accepted and its chain's tree holds its patch applied
// (kernel.c's "int b = 3;"); otherwise it exits 1 saying which. bench/propose/run.py runs it
// (full size: --repeats 7, runs in bench/propose/RESULTS.md; the ctest bench_propose_runs: 1).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ProposalContext.h"
#include "ProposeStage.h"
#include "Trees.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/scheduler/Proposals.h"

namespace fs = std::filesystem;
using namespace flotilla;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Spread {
  double median, low, high;
};

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

nlohmann::json json_of(const Spread& s) { return {{"median", s.median}, {"min", s.low}, {"max", s.high}}; }

const char* kPatch = "--- a/kernel.c\n+++ b/kernel.c\n@@ -1,3 +1,3 @@\n int a = 1;\n-int b = 2;\n+int b = 3;\n int c = 4;\n";

struct World {
  scheduler::Settings settings;
  std::vector<results::CandidateRecord> candidates;
  std::vector<results::TrialRecord> trials;
  std::vector<results::ProposalRecord> proposals;
};

// N candidates: the baseline, then declared and proposal candidates in turn, each proposal built
// on the one before it (chains up to 8), every candidate verified, with 3 repeats and 2 shards.
World make_world(int n, const fs::path& dir) {
  World w;
  auto& s = w.settings;
  s.name = "bench";
  s.results = dir / "bench.h5";
  s.campaign_results = s.results;
  s.objective = "gflops";
  s.propose.command = "propose {out}";
  s.propose.tree = dir / "src";
  s.propose.budget = 1'000'000;
  s.propose.max_per_round = 1'000'000;
  s.space.add_parameter(search::parse_parameter("x: int: 1..100000"));
  fs::create_directories(s.propose.tree);
  {
    std::ofstream out(s.propose.tree / "kernel.c");
    out << "int a = 1;\nint b = 2;\nint c = 4;\n";
    for (int i = 0; i < 2000; ++i) out << "int filler" << i << " = " << i << ";\n";  // a 40 KB source
  }
  std::int64_t last_proposal_candidate = 0;
  for (int i = 0; i < n; ++i) {
    results::CandidateRecord c{.id = i, .round = i / 8, .config = fmt::format("x={}", i + 1), .origin = "grid"};
    if (i == 0) c.origin = "baseline";
    if (i > 0 && i % 2 == 0) {
      const auto parent = (i / 2) % 8 == 0 ? 0 : last_proposal_candidate;
      w.proposals.push_back({.id = static_cast<std::int64_t>(w.proposals.size()), .round = c.round, .parent = parent,
                             .hash = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL,
                             .status = results::ProposalStatus::accepted, .name = fmt::format("p{}", i),
                             .reason = "configuration: " + c.config, .patch = "--- a/kernel.c\n+++ b/kernel.c\n"});
      c.origin = fmt::format("proposal {}", w.proposals.back().id);
      last_proposal_candidate = i;
    }
    w.candidates.push_back(c);
    for (int r = 0; r < 3; ++r)
      w.trials.push_back({.candidate = i, .kind = results::TrialKind::explore, .index = r,
                          .status = results::TrialStatus::ok, .start = 1, .end = 2, .objective = 1.0 + i % 97,
                          .metrics = {{"gflops", 1.0 + i % 97}}});
    for (int shard = 0; shard < 2; ++shard)
      w.trials.push_back({.candidate = i, .kind = results::TrialKind::evaluate, .index = shard,
                          .status = results::TrialStatus::ok, .start = 2, .end = 3, .objective = std::nan("")});
  }
  return w;
}

nlohmann::json measure(int n, int repeats, const fs::path& root) {
  const auto dir = root / fmt::format("n{}", n);
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto w = make_world(n, dir);
  results::CampaignInfo info{.name = "bench", .objective = "gflops", .direction = "maximize", .repeats = 3,
                             .shards = 2, .confirm_max_pairs = 0};
  scheduler::ProposeStage stage(w.settings, {});
  std::vector<double> summary_ms, context_ms, judge_ms, tree_ms, copy_ms, total_ms;
  for (int r = 0; r < repeats; ++r) {
    const auto begin = Clock::now();
    auto start = Clock::now();
    const auto summary = results::summarize(info, w.candidates, w.trials, w.proposals);
    summary_ms.push_back(ms_since(start));

    start = Clock::now();
    const auto best = scheduler::resolve_parent("best", summary).id;
    scheduler::ContextInputs in{.settings = w.settings, .summary = summary, .candidates = w.candidates,
                                .trials = w.trials, .proposals = w.proposals, .round = 1000, .index = 0, .seed = 1,
                                .out = dir / "out", .plain_tree = w.settings.propose.tree,
                                .best_tree = w.settings.propose.tree, .best = best, .proposals_left = 10};
    {
      std::ofstream out(dir / "context.json");
      out << scheduler::proposal_context(in).dump(2) << '\n';
    }
    context_ms.push_back(ms_since(start));

    start = Clock::now();
    // The proposal a proposer wrote this round, on the baseline (whose tree is the plain one).
    const auto j = stage.judge(1000, {{.index = 0, .files = {{.name = "fresh.patch", .content = kPatch},
                                                            {.name = "fresh.json", .content = R"({"parent": "baseline"})"}}}},
                               summary, w.candidates, w.proposals, 0);
    judge_ms.push_back(ms_since(start));
    if (j.accepted.size() != 1) throw std::runtime_error("the bench's proposal was refused: " + j.records[0].reason);

    start = Clock::now();
    auto proposals = w.proposals;  // its chain's tree, made as a build would ask for it
    auto record = j.records[j.accepted[0].record];
    record.id = static_cast<std::int64_t>(proposals.size());
    proposals.push_back(record);
    const auto tree = stage.trees().ensure({record.id}, proposals);
    tree_ms.push_back(ms_since(start));
    std::ifstream kernel(tree / "kernel.c");
    const std::string source{std::istreambuf_iterator<char>(kernel), std::istreambuf_iterator<char>()};
    if (source.find("\nint b = 3;\n") == std::string::npos || source.find("int b = 2;") != std::string::npos)
      throw std::runtime_error("the proposal's tree " + tree.string() + " does not hold its patch");
    total_ms.push_back(ms_since(begin));
    fs::remove_all(stage.trees().root());

    start = Clock::now();  // the baseline: one copy of the source tree
    fs::copy(w.settings.propose.tree, dir / "copy", fs::copy_options::recursive);
    copy_ms.push_back(ms_since(start));
    fs::remove_all(dir / "copy");
  }
  fs::remove_all(dir);
  return {{"candidates", n},
          {"proposals_recorded", w.proposals.size()},
          {"summary_ms", json_of(spread(summary_ms))},
          {"context_ms", json_of(spread(context_ms))},
          {"judge_ms", json_of(spread(judge_ms))},
          {"tree_ms", json_of(spread(tree_ms))},
          {"total_ms", json_of(spread(total_ms))},
          {"baseline_tree_copy_ms", json_of(spread(copy_ms))}};
}

}  // namespace

int main(int argc, char** argv) try {
  int repeats = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--repeats") repeats = std::max(1, std::atoi(argv[i + 1]));
  const auto root = fs::temp_directory_path() / fmt::format("flotilla-propose-cost-{}", ::getpid());
  nlohmann::json sizes = nlohmann::json::array();
  for (int n : {10, 1000}) {
    sizes.push_back(measure(n, repeats, root));
    std::fprintf(stderr, "%s\n", sizes.back().dump().c_str());
  }
  fs::remove_all(root);
  const double at_1000 = sizes[1]["total_ms"]["median"].get<double>();
  std::printf("%s\n", nlohmann::json({{"bench", "propose_cost"},
                                      {"repeats", repeats},
                                      {"sizes", sizes},
                                      {"ms_per_proposal_at_10", sizes[0]["total_ms"]["median"]},
                                      {"ms_per_proposal_at_1000", at_1000},
                                      {"target_ms_at_1000", 50},
                                      {"met", at_1000 <= 50}})
                          .dump()
                          .c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "propose_cost: %s\n", e.what());
  return 1;
}
