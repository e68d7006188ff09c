// DecodeTest.cpp — the decode-step families (rmsnorm, gemv, attention), the decode engine and
// speculative decoding. Every variant is verified against the double-precision reference with the
// family's stated tolerance; speculative decoding must give exactly the greedy tokens.
#include <gtest/gtest.h>

#include <cmath>

#include "DecodeCommon.h"  // internal: seeded data
#include "DecodeEngine.h"  // internal: the kernels' batch invariance and the engine itself
#include "flotilla/kernels/Family.h"
#include "flotilla/kernels/Run.h"

namespace fk = flotilla::kernels;
namespace fd = flotilla::kernels::decode;

namespace {

const fk::KernelFamily& family(const char* name) {
  const fk::KernelFamily* f = fk::find_family(name);
  if (!f) throw std::runtime_error(std::string(name) + " family missing");
  return *f;
}

// Verifies every shard of `shards` and returns the largest error; fails the test on any shard.
double verify_all(const char* name, const fk::Params& p, int shards) {
  double worst = 0;
  for (int s = 0; s < shards; ++s) {
    const fk::VerifyResult r = family(name).verify(p, s, shards);
    EXPECT_EQ(r.outcome, fk::Outcome::ok) << name << ": " << r.message;
    EXPECT_LE(r.max_abs_error, r.tolerance) << r.message;
    worst = std::max(worst, r.max_abs_error);
  }
  return worst;
}

std::string rejection(const char* name, const fk::Params& p, bool verify = false) {
  try {
    if (verify) {
      (void)family(name).verify(p, 0, 1);
    } else {
      (void)family(name).benchmark(p);
    }
  } catch (const fk::InvalidParameter& e) {
    return std::string(e.parameter()) + ": " + e.what();
  }
  return "accepted";
}

std::vector<std::string> metric_names(const fk::BenchmarkResult& r) {
  std::vector<std::string> names;
  for (const fk::Metric& m : r.metrics) names.push_back(m.name);
  return names;
}

TEST(DecodeFamilies, AreRegistered) {
  for (const char* name : {"rmsnorm", "gemv", "attention", "decode"}) EXPECT_NE(fk::find_family(name), nullptr) << name;
}

TEST(Bf16, RoundsToNearestEvenAndDecodesExactly) {
  EXPECT_EQ(fd::float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fd::bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(fd::float_to_bf16(1.0f + 0x1.0p-8f), 0x3f80);                 // tie: to even (down)
  EXPECT_EQ(fd::float_to_bf16(1.0f + 3 * 0x1.0p-8f), 0x3f82);             // tie: to even (up)
  EXPECT_EQ(fd::float_to_bf16(-2.5f), 0xc020);
  EXPECT_EQ(fd::bf16_to_float(fd::float_to_bf16(0.15625f)), 0.15625f);  // representable: exact
}

TEST(RmsNorm, EveryVariantMatchesTheReference) {
  for (const char* impl : {"separate", "fused"})
    for (const char* vec : {"1", "2", "4", "8"})
      for (const char* rpt : {"1", "3", "64"}) {
        // d = 100: not a multiple of 8, so the tail path runs too; 13 rows in 3 shards.
        const fk::Params p{{"impl", impl}, {"vec", vec}, {"rows_per_team", rpt}, {"rows", "13"}, {"d", "100"}};
        EXPECT_LT(verify_all("rmsnorm", p, 3), 1e-5) << impl << " vec " << vec << " rows/team " << rpt;
      }
}

TEST(RmsNorm, BenchmarkMetrics) {
  const fk::BenchmarkResult r = family("rmsnorm").benchmark({{"impl", "fused"}, {"rows", "4"}, {"d", "256"}, {"iters", "2"}});
  ASSERT_EQ(r.outcome, fk::Outcome::ok);
  EXPECT_EQ(metric_names(r), (std::vector<std::string>{"gbps", "time_s", "rows_per_s"}));
  for (const fk::Metric& m : r.metrics) EXPECT_GT(m.value, 0) << m.name;
}

TEST(Gemv, EveryVariantMatchesTheReference) {
  for (const char* weights : {"fp32", "bf16"})
    for (const char* unroll : {"1", "2", "4", "8"})
      for (const char* split : {"1", "4", "16"})
        for (const char* interleave : {"1", "2", "4"})  // 5 rows per team: a remainder row or more
          for (const char* batch : {"1", "3"}) {
            const fk::Params p{
                {"weights", weights},   {"unroll", unroll}, {"split_k", split}, {"interleave", interleave},
                {"rows_per_team", "5"}, {"rows", "37"},     {"cols", "101"},    {"batch", batch}};
            EXPECT_LT(verify_all("gemv", p, 2), 1e-6)
                << weights << " unroll " << unroll << " split " << split << " interleave " << interleave;
          }
}

// Interleaving rows changes which rows share a loop, never a row's summation order.
TEST(Gemv, InterleavedRowsGiveTheSameBits) {
  const int rows = 29, cols = 77, batch = 3;
  fd::Mat w("w", rows, cols), x("x", batch, cols), y1("y1", batch, rows), y("y", batch, rows);
  auto wh = Kokkos::create_mirror_view(w);
  auto xh = Kokkos::create_mirror_view(x);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) wh(r, c) = fd::seeded_uniform(5, 1, r * cols + c, 1.0f);
  for (int t = 0; t < batch; ++t)
    for (int c = 0; c < cols; ++c) xh(t, c) = fd::seeded_uniform(5, 2, t * cols + c, 1.0f);
  Kokkos::deep_copy(w, wh);
  Kokkos::deep_copy(x, xh);
  fd::Vec ws("ws", 1);
  fd::gemv(fd::GemvVariant{6, 8, 1, 1}, w, x, y1, ws);
  auto y1h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
  for (int interleave : {2, 4}) {
    fd::gemv(fd::GemvVariant{6, 8, 1, interleave}, w, x, y, ws);
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (int t = 0; t < batch; ++t)
      for (int r = 0; r < rows; ++r) ASSERT_EQ(yh(t, r), y1h(t, r)) << "interleave " << interleave << " row " << r;
  }
}

TEST(Gemv, BenchmarkMetrics) {
  const fk::Params small{{"rows", "64"}, {"cols", "64"}, {"iters", "2"}};
  const fk::BenchmarkResult r = family("gemv").benchmark(small);
  ASSERT_EQ(r.outcome, fk::Outcome::ok);
  EXPECT_EQ(metric_names(r), (std::vector<std::string>{"gbps", "time_s", "gflops"}));
}

// The invariant speculative decoding rests on: a token's outputs do not depend on the batch.
TEST(Gemv, BatchedOutputsAreBitwiseThoseOfSingleTokens) {
  const int rows = 29, cols = 77, batch = 5;
  for (int split : {1, 4}) {
    const fd::GemvVariant v{4, 8, split};
    fd::Mat w("w", rows, cols), x("x", batch, cols), y("y", batch, rows), y1("y1", 1, rows);
    auto wh = Kokkos::create_mirror_view(w);
    auto xh = Kokkos::create_mirror_view(x);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) wh(r, c) = fd::seeded_uniform(3, 1, r * cols + c, 1.0f);
    for (int t = 0; t < batch; ++t)
      for (int c = 0; c < cols; ++c) xh(t, c) = fd::seeded_uniform(3, 2, t * cols + c, 1.0f);
    Kokkos::deep_copy(w, wh);
    Kokkos::deep_copy(x, xh);
    fd::Vec ws("ws", fd::gemv_workspace_size(v, batch, rows));
    fd::gemv(v, w, x, y, ws);
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (int t = 0; t < batch; ++t) {
      fd::Mat xt = Kokkos::subview(x, std::make_pair(t, t + 1), Kokkos::ALL);
      fd::gemv(v, w, xt, y1, ws);
      auto y1h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
      for (int r = 0; r < rows; ++r) ASSERT_EQ(yh(t, r), y1h(0, r)) << "split " << split << " token " << t;
    }
  }
}

TEST(Attention, EverySplitMatchesTheReference) {
  for (const char* splits : {"1", "2", "4", "8", "16", "32", "64"})  // 64 > 37 keys: empty chunks
    for (const char* unroll : {"1", "8"})
    for (const char* batch : {"1", "4"}) {
      // head_dim 12: not a multiple of 8, so the tail of the unrolled dot runs too.
      const fk::Params p{{"splits", splits}, {"unroll", unroll}, {"seq_len", "37"}, {"heads", "3"}, {"head_dim", "12"}, {"batch", batch}};
      EXPECT_LT(verify_all("attention", p, 3), 1e-6) << "splits " << splits << " batch " << batch;
    }
}

// Heads walked together (1, a group with a remainder, all, more than all) and prefetching
// change the memory order only; every combination still matches the reference.
TEST(Attention, EveryHeadGroupingMatchesTheReference) {
  for (const char* group : {"1", "2", "3", "8"})
    for (const char* prefetch : {"0", "2"})
      for (const char* splits : {"1", "4"})
        for (const char* batch : {"1", "4"}) {
          const fk::Params p{{"heads_per_team", group}, {"prefetch", prefetch}, {"splits", splits}, {"unroll", "8"},
                             {"seq_len", "37"},         {"heads", "3"},         {"head_dim", "12"}, {"batch", batch}};
          EXPECT_LT(verify_all("attention", p, 3), 1e-6)
              << "heads_per_team " << group << " prefetch " << prefetch << " splits " << splits << " batch " << batch;
        }
}

TEST(Attention, RejectsABatchLongerThanTheCache) {
  EXPECT_EQ(rejection("attention", {{"seq_len", "3"}, {"batch", "4"}}),
            "batch: parameter 'batch' (4) must be <= seq_len (3)");
}

TEST(Attention, RejectsMoreAccumulatorsThanATeamHolds) {
  EXPECT_EQ(rejection("attention", {{"heads", "32"}, {"head_dim", "256"}, {"heads_per_team", "32"}}),
            "heads_per_team: parameters 'heads_per_team' * 'head_dim' (8192) must be <= 4096 accumulators per team");
  // Beyond the heads it means all of them: 8 heads of 64 fit.
  EXPECT_EQ(rejection("attention", {{"seq_len", "8"}, {"heads_per_team", "128"}, {"iters", "1"}}), "accepted");
}

TEST(NgramDraft, ProposesWhatFollowedTheLatestEarlierOccurrence) {
  EXPECT_EQ(fd::ngram_draft({1, 2, 3, 4, 1, 2, 5, 6, 1, 2}, 2, 3), (std::vector<int>{5, 6, 1}));
  EXPECT_EQ(fd::ngram_draft({1, 2, 3, 4, 1, 2}, 2, 8), (std::vector<int>{3, 4, 1, 2}));  // up to the end
  EXPECT_EQ(fd::ngram_draft({1, 2, 3, 4}, 2, 3), (std::vector<int>{}));                  // no occurrence
  EXPECT_EQ(fd::ngram_draft({7, 7}, 2, 3), (std::vector<int>{}));                        // too short
  EXPECT_EQ(fd::ngram_draft({7, 7, 7}, 1, 2), (std::vector<int>{7}));
}

fd::ModelShape small_model(std::uint64_t seed) { return fd::ModelShape{2, 64, 4, 128, 97, seed}; }

std::vector<int> generate(const fd::HostModel& model, const fd::EngineVariant& v, const std::vector<int>& prompt,
                          int n, fd::Generation* out = nullptr) {
  fd::Engine engine(model, v, static_cast<int>(prompt.size()) + n + fd::max_batch);
  fd::Generation g = engine.generate(prompt, n);
  if (out) *out = g;
  return g.tokens;
}

TEST(DecodeEngine, GreedyMatchesTheDoubleReference) {
  for (std::uint64_t seed : {1, 2}) {
    const fd::HostModel model = fd::make_model(small_model(seed));
    const std::vector<int> prompt = fd::seeded_prompt(97, 24, seed);
    const fd::Reference ref = fd::reference_greedy(model, prompt, 40);
    fd::Generation g;
    EXPECT_EQ(generate(model, fd::EngineVariant{}, prompt, 40, &g), ref.tokens) << "seed " << seed;
    EXPECT_EQ(g.forwards, 40);
    EXPECT_EQ(g.drafted, 0);
    const fd::Profile& p = g.profile;
    EXPECT_NEAR(p.norm + p.gemv + p.attention + p.draft + p.other, g.time_s, 1e-9 + 1e-6 * g.time_s);
  }
}

// Speculative decoding with both drafters and several draft lengths, over tuned kernel variants:
// the tokens are exactly those of plain greedy decoding with the same kernels.
TEST(DecodeEngine, SpeculativeDecodingGivesTheGreedyTokens) {
  const fd::HostModel model = fd::make_model(small_model(5));
  const std::vector<int> prompt = fd::seeded_prompt(97, 24, 5);
  for (bool fused : {false, true}) {
    fd::EngineVariant plain;
    plain.norm = fd::NormVariant{fused, fused ? 4 : 1, 1};
    plain.gemv = fd::GemvVariant{4, fused ? 8 : 1, fused ? 2 : 1};
    plain.attn = fd::AttnVariant{fused ? 4 : 1, fused ? 8 : 1};
    const std::vector<int> greedy = generate(model, plain, prompt, 45);
    int accepted = 0;
    for (fd::Drafter drafter : {fd::Drafter::ngram, fd::Drafter::model})
      for (int k : {1, 3, 7, 15}) {
        fd::EngineVariant spec = plain;
        spec.drafter = drafter;
        spec.k = k;
        spec.ngram = 1;
        fd::Generation g;
        EXPECT_EQ(generate(model, spec, prompt, 45, &g), greedy) << "drafter " << int(drafter) << " k " << k;
        EXPECT_LE(g.forwards, 45);
        EXPECT_EQ(45, g.forwards + g.accepted);  // each forward yields its accepted drafts + one token
        accepted += g.accepted;
      }
    EXPECT_GT(accepted, 0);  // the drafters do get tokens accepted, so the batched path is exercised
  }
}

TEST(DecodeFamily, VerifiesAndReportsTheBottleneckProfile) {
  const fk::Params p{{"layers", "2"}, {"d_model", "64"}, {"ffn", "128"}, {"vocab", "97"}, {"prompt_len", "16"},
                     {"tokens", "24"}, {"drafter", "ngram"}, {"ngram", "1"}};
  const fk::BenchmarkResult r = family("decode").benchmark(p);
  ASSERT_EQ(r.outcome, fk::Outcome::ok) << r.message;
  EXPECT_EQ(metric_names(r),
            (std::vector<std::string>{"tokens_per_s", "time_s", "share_norm", "share_gemv", "share_attention",
                                      "share_draft", "share_other", "bottleneck", "tokens_per_forward", "accept_rate"}));
  double shares = 0;
  for (int i = 2; i < 7; ++i) shares += r.metrics[std::size_t(i)].value;
  EXPECT_NEAR(shares, 1.0, 1e-6);
  const fk::VerifyResult v = family("decode").verify(p, 1, 2);
  EXPECT_EQ(v.outcome, fk::Outcome::ok) << v.message;
  EXPECT_EQ(v.message.rfind("shard 1/2: 24 tokens identical to greedy reference (min top-2 logit margin ", 0), 0u)
      << v.message;
}

TEST(DecodeFamily, RejectsInconsistentShapes) {
  EXPECT_EQ(rejection("decode", {{"d_model", "66"}, {"heads", "4"}}),
            "d_model: parameter 'd_model' (66) must be a multiple of heads (4) with at most 256 per head");
  EXPECT_EQ(rejection("decode", {{"drafter", "model"}, {"layers", "2"}, {"draft_layers", "2"}}),
            "draft_layers: parameter 'draft_layers' (2) must be < layers (2) with drafter 'model'");
  EXPECT_EQ(rejection("decode", {{"k", "16"}}), "k: parameter 'k' must be an integer in [1, 15], got '16'");
}

}  // namespace

namespace {

// In this test process MPI is started by the family itself: a world of one rank.
TEST(AllreduceNorm, BothImplementationsMatchTheReferenceOnOneRank) {
  for (const char* impl : {"separate", "fused"})
    for (const char* norm : {"separate", "fused"}) {
      const fk::Params p{{"impl", impl}, {"norm", norm}, {"rows", "9"}, {"d", "70"}};
      EXPECT_LT(verify_all("allreduce_norm", p, 3), 1e-5) << impl << " " << norm;
    }
  const fk::BenchmarkResult r = family("allreduce_norm").benchmark({{"rows", "4"}, {"d", "64"}, {"iters", "2"}});
  ASSERT_EQ(r.outcome, fk::Outcome::ok) << r.message;
  EXPECT_EQ(metric_names(r), (std::vector<std::string>{"gbps", "time_s", "ranks"}));
  EXPECT_EQ(r.metrics[2].value, 1.0);
  EXPECT_FALSE(r.quiet);
}

}  // namespace

namespace {

// The CUDA twins and the CUDA-only family: verified on a GPU, otherwise skipped with a reason.
TEST(DecodeCuda, TwinsVerifyOrAreSkippedWithAReasonButNeverFail) {
  const std::vector<std::pair<const char*, fk::Params>> cases = {
      {"rmsnorm", {{"device", "cuda"}, {"impl", "fused"}, {"vec", "4"}, {"rows_per_team", "4"}, {"rows", "13"}, {"d", "100"}}},
      {"rmsnorm", {{"device", "cuda"}, {"impl", "separate"}, {"rows", "13"}, {"d", "100"}}},
      {"gemv", {{"device", "cuda"}, {"weights", "bf16"}, {"unroll", "4"}, {"split_k", "4"}, {"rows", "37"}, {"cols", "101"}, {"batch", "3"}}},
      {"gemv", {{"device", "cuda"}, {"rows", "37"}, {"cols", "101"}}},
      {"attention", {{"device", "cuda"}, {"splits", "8"}, {"seq_len", "37"}, {"heads", "3"}, {"head_dim", "40"}, {"batch", "4"}}},
      {"h2d_metadata", {{"impl", "packed"}, {"arrays", "5"}, {"ints", "300"}, {"steps", "7"}}},
      {"allreduce_norm", {{"device", "nccl"}, {"impl", "fused"}, {"rows", "8"}, {"d", "70"}}},
      {"allreduce_norm", {{"device", "nccl"}, {"impl", "separate"}, {"rows", "8"}, {"d", "70"}}},
      {"h2d_metadata", {{"impl", "separate"}, {"steps", "7"}}},
  };
  std::string skipped;
  for (const auto& [name, p] : cases) {
    const fk::VerifyResult r = family(name).verify(p, 1, 2);
    EXPECT_NE(r.outcome, fk::Outcome::failed) << name << ": " << r.message;
    if (r.outcome == fk::Outcome::ok) {
      EXPECT_LE(r.max_abs_error, r.tolerance) << name << ": " << r.message;
    }
    if (r.outcome == fk::Outcome::skipped) {
      EXPECT_NE(r.message.find("CUDA"), std::string::npos) << r.message;
      skipped = r.message;
    }
  }
  if (!skipped.empty()) GTEST_SKIP() << skipped;  // visible as Skipped, with the reason
}

TEST(DecodeCuda, RowsPerBlockAreBoundedByTheWarpsOfABlock) {
  EXPECT_EQ(rejection("gemv", {{"device", "cuda"}, {"rows_per_team", "33"}}),
            "rows_per_team: parameter 'rows_per_team' must be <= 32 with device 'cuda' (one warp per row)");
}

}  // namespace

namespace {

// What flotilla-worker does in-process: the same text and exit status as the executable.
TEST(DecodeFamily, RunsInProcessAsTheWorkerRunsIt) {
  const fk::Params p{{"layers", "2"}, {"d_model", "64"}, {"ffn", "128"}, {"vocab", "97"}, {"tokens", "12"},
                     {"drafter", "model"}, {"k", "3"}};
  const fk::RunReport bench = fk::run_variant({"decode", p, false, 0, 1});
  EXPECT_EQ(bench.exit_code, fk::kExitOk) << bench.err;
  EXPECT_NE(bench.out.find("\nflotilla-metric: tokens_per_s="), std::string::npos) << bench.out;
  const fk::RunReport check = fk::run_variant({"decode", p, true, 1, 2});
  EXPECT_EQ(check.exit_code, fk::kExitOk) << check.err;
  EXPECT_NE(check.out.find("PASS shard 1/2: 12 tokens identical to greedy reference"), std::string::npos) << check.out;
}

}  // namespace
