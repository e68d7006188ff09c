// DecodeFamily.cpp — the `decode` family: the decode engine (DecodeEngine.h) as a tunable
// workload. benchmark generates `tokens` tokens and reports tokens/s with the bottleneck profile
// (each component's share of the decode time); verify checks that the generated tokens are
// identical to plain greedy decoding by the double-precision reference, one prompt per shard.
#include <algorithm>
#include <cmath>

#include "DecodeCommon.h"
#include "DecodeEngine.h"
#include "Families.h"

namespace flotilla::kernels {

namespace {

using namespace decode;

// clang-format off
std::vector<ParamDecl> decode_params() {
  return {
      {"drafter", "speculative drafter: none (plain greedy), ngram (prompt lookup) or model (the first draft_layers layers)",
       "none", {"none", "ngram", "model"}, 0, 0},
      {"k", "draft length: tokens drafted, then verified in one batched forward", "4", {}, 1, max_batch - 1},
      {"draft_layers", "drafter=model: layers of the draft model (< layers)", "1", {}, 1, 64},
      {"ngram", "drafter=ngram: length of the suffix looked up", "2", {}, 1, 8},
      {"weights", "weight storage (bf16 changes the model: verification decides)", "fp32", {"fp32", "bf16"}, 0, 0},
      {"gemv_unroll", "GEMV columns per step", "1", {"1", "2", "4", "8"}, 0, 0},
      {"gemv_rows", "GEMV output rows per team", "8", {}, 1, 4096},
      {"gemv_split_k", "GEMV split-K partial sums", "1", {"1", "2", "4", "8", "16"}, 0, 0},
      {"norm", "residual+RMSNorm: separate kernels or fused", "separate", {"separate", "fused"}, 0, 0},
      {"norm_vec", "RMSNorm columns per step", "1", {"1", "2", "4", "8"}, 0, 0},
      {"attn_splits", "attention split-K chunks per (token, head)", "1", {"1", "2", "4", "8", "16"}, 0, 0},
      {"attn_unroll", "attention q.k dot columns per step", "1", {"1", "2", "4", "8"}, 0, 0},
      {"layers", "transformer layers", "4", {}, 1, 64},
      {"d_model", "model width (a multiple of heads)", "256", {}, 1, 4096},
      {"heads", "attention heads", "4", {}, 1, 64},
      {"ffn", "MLP hidden width", "512", {}, 1, 16384},
      {"vocab", "vocabulary size", "512", {}, 2, 65536},
      {"prompt_len", "prompt tokens (prefill, not timed)", "32", {}, 1, 4096},
      {"tokens", "tokens generated", "64", {}, 1, 4096},
      {"seed", "seed of the weights and prompts", "1", {}, 0, 2147483647},
  };
}
// clang-format on

struct Setup {
  ModelShape shape;
  EngineVariant variant;
  int prompt_len = 0;
  int tokens = 0;
};

Setup make_setup(const KernelFamily& family, const Params& given) {
  const Params p = resolve_params(family, given);
  Setup s;
  s.shape = ModelShape{iparam(p, "layers"), iparam(p, "d_model"), iparam(p, "heads"), iparam(p, "ffn"),
                       iparam(p, "vocab"), static_cast<std::uint64_t>(int_param(p, "seed"))};
  if (s.shape.d_model % s.shape.heads != 0 || s.shape.d_model / s.shape.heads > max_head_dim) {
    throw InvalidParameter("d_model", "parameter 'd_model' (" + p.at("d_model") + ") must be a multiple of heads (" +
                                          p.at("heads") + ") with at most " + std::to_string(max_head_dim) +
                                          " per head");
  }
  EngineVariant& v = s.variant;
  v.norm = NormVariant{p.at("norm") == "fused", iparam(p, "norm_vec"), 1};
  v.gemv = GemvVariant{iparam(p, "gemv_rows"), iparam(p, "gemv_unroll"), iparam(p, "gemv_split_k")};
  v.attn = AttnVariant{iparam(p, "attn_splits"), iparam(p, "attn_unroll")};
  v.bf16 = p.at("weights") == "bf16";
  const std::string& drafter = p.at("drafter");
  v.drafter = drafter == "ngram" ? Drafter::ngram : drafter == "model" ? Drafter::model : Drafter::none;
  v.k = iparam(p, "k");
  v.draft_layers = iparam(p, "draft_layers");
  v.ngram = iparam(p, "ngram");
  if (v.drafter == Drafter::model && v.draft_layers >= s.shape.layers) {
    throw InvalidParameter("draft_layers", "parameter 'draft_layers' (" + p.at("draft_layers") +
                                               ") must be < layers (" + p.at("layers") + ") with drafter 'model'");
  }
  s.prompt_len = iparam(p, "prompt_len");
  s.tokens = iparam(p, "tokens");
  return s;
}

std::vector<int> shard_prompt(const Setup& s, int shard) {
  return seeded_prompt(s.shape.vocab, s.prompt_len, splitmix(s.shape.seed) + static_cast<std::uint64_t>(shard));
}

void require_kokkos() {
  if (!Kokkos::is_initialized()) {
    throw std::logic_error("decode: Kokkos is not initialised; create a flotilla::kernels::Runtime first");
  }
}

class DecodeFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "decode"; }
  std::string_view description() const override {
    return "LLM decode engine (seeded transformer from these kernels): tokens/s and bottleneck profile; "
           "speculative decoding (n-gram, draft model)";
  }
  const std::vector<ParamDecl>& params() const override { return m_params; }

  BenchmarkResult benchmark(const Params& given) const override {
    const Setup s = make_setup(*this, given);
    require_kokkos();
    const HostModel model = make_model(s.shape);
    Engine engine(model, s.variant, s.prompt_len + s.tokens + max_batch);
    const Generation g = engine.generate(shard_prompt(s, 0), s.tokens);
    const double t = std::max(g.time_s, 1e-9);
    const Profile& p = g.profile;
    const double shares[] = {p.norm / t, p.gemv / t, p.attention / t, p.draft / t, p.other / t};
    const auto bottleneck = std::max_element(std::begin(shares), std::end(shares)) - std::begin(shares);
    return BenchmarkResult{Outcome::ok,
                           "",
                           {{"tokens_per_s", s.tokens / t},
                            {"time_s", g.time_s},
                            {"share_norm", shares[0]},
                            {"share_gemv", shares[1]},
                            {"share_attention", shares[2]},
                            {"share_draft", shares[3]},
                            {"share_other", shares[4]},
                            {"bottleneck", static_cast<double>(bottleneck)},
                            {"tokens_per_forward", double(s.tokens) / g.forwards},
                            {"accept_rate", g.drafted ? double(g.accepted) / g.drafted : 0.0}}};
  }

  VerifyResult verify(const Params& given, int shard, int shards) const override {
    const Setup s = make_setup(*this, given);
    check_shard(shard, shards, 64, "64 prompts");
    require_kokkos();
    const HostModel model = make_model(s.shape);
    const std::vector<int> prompt = shard_prompt(s, shard);
    Engine engine(model, s.variant, s.prompt_len + s.tokens + max_batch);
    const Generation g = engine.generate(prompt, s.tokens);
    const Reference ref = reference_greedy(model, prompt, s.tokens);
    const std::string where = "shard " + std::to_string(shard) + "/" + std::to_string(shards) + ": ";
    int differ = 0, first = -1;
    for (std::size_t i = 0; i < ref.tokens.size(); ++i) {
      if (g.tokens[i] != ref.tokens[i]) {
        ++differ;
        if (first < 0) first = static_cast<int>(i);
      }
    }
    if (differ == 0) {
      return VerifyResult{Outcome::ok,
                          where + std::to_string(s.tokens) + " tokens identical to greedy reference (min top-2 logit margin " +
                              fmt_g("%.2g", ref.min_margin) + ")",
                          0, 0};
    }
    const auto i = static_cast<std::size_t>(first);
    return VerifyResult{Outcome::failed,
                        where + std::to_string(differ) + " of " + std::to_string(s.tokens) +
                            " tokens differ from greedy reference, first at " + std::to_string(first) + ": " +
                            std::to_string(g.tokens[i]) + " instead of " + std::to_string(ref.tokens[i]),
                        double(differ), 0};
  }

 private:
  std::vector<ParamDecl> m_params = decode_params();
};

}  // namespace

const KernelFamily& decode_family() {
  static const DecodeFamily family;
  return family;
}

}  // namespace flotilla::kernels
