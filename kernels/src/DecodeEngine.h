// DecodeEngine.h — internal: a small decoder-only transformer built from the decode-step kernels
// (DecodeKernels.h), greedy and speculative decoding, and the plain double-precision reference.
//
// Model: token embedding + sinusoidal position, then `layers` pre-norm blocks
//   n = RMSNorm(x);  x += Wo * attention(Wqkv * n);  n = RMSNorm(x);  x += W2 * relu(W1 * n)
// every "x += ...; n = RMSNorm(x)" being one residual+RMSNorm call, then lm_head * n and argmax
// (ties: the lowest token id). All weights come from the seed (DecodeCommon.h).
//
// Invariants:
// * Speculative decoding (n-gram prompt lookup, or the model's own first `draft_layers` layers as
//   the draft model) verifies its k drafted tokens in ONE batched forward and keeps the longest
//   prefix that matches the target's greedy choice, plus the target's next token. Because every
//   kernel computes a token's outputs in an order independent of the batch (DecodeKernels.h), the
//   tokens are bit-for-bit those of plain greedy decoding with the same kernel variant.
// * The profile's components add up to the decode time: norm, gemv (every projection and the
//   lm_head), attention (KV-cache writes and attention), draft (the drafter's whole time), other
//   (embedding, argmax, bookkeeping: the remainder). Prefill is not timed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "DecodeKernels.h"

namespace flotilla::kernels::decode {

struct ModelShape {
  int layers = 4;
  int d_model = 256;
  int heads = 4;
  int ffn = 512;
  int vocab = 512;
  std::uint64_t seed = 1;
};

// The fp32 master weights, on the host, row-major (out x in).
struct HostModel {
  struct Layer {
    std::vector<float> wqkv, wo, w1, w2, g_attn, g_mlp;
  };
  ModelShape shape;
  std::vector<float> embed;  // vocab x d_model
  std::vector<Layer> layers;
  std::vector<float> g_final;
  std::vector<float> lm_head;  // vocab x d_model
};
HostModel make_model(const ModelShape& shape);
// The position signal added to the embedding (the engine and the reference share it).
float position_signal(int position, int column, int d_model);
// `length` tokens: a seeded random phrase of 8 tokens repeated with seeded edits, so that
// prompt lookup has something to find, as in real prompts that quote themselves.
std::vector<int> seeded_prompt(int vocab, int length, std::uint64_t seed);

enum class Drafter { none, ngram, model };

struct EngineVariant {
  NormVariant norm;
  GemvVariant gemv;
  AttnVariant attn;
  bool bf16 = false;  // weights stored as bf16 (the model changes; verification decides)
  Drafter drafter = Drafter::none;
  int k = 4;             // draft length
  int draft_layers = 1;  // Drafter::model: the first layers of the target
  int ngram = 2;         // Drafter::ngram: the suffix length looked up
};

struct Profile {
  double norm = 0, gemv = 0, attention = 0, draft = 0, other = 0;
};

struct Generation {
  std::vector<int> tokens;  // the new tokens only
  Profile profile;
  double time_s = 0;  // decode time, prefill excluded
  int forwards = 0;   // forwards of the target model
  int drafted = 0;
  int accepted = 0;
};

class Engine {
 public:
  Engine(const HostModel& model, const EngineVariant& variant, int max_len);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  Generation generate(const std::vector<int>& prompt, int new_tokens);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

struct Reference {
  std::vector<int> tokens;
  double min_margin = 0;  // smallest gap between the best and second-best logit over the steps
};
// Plain greedy decoding in double precision over the fp32 master weights: no Kokkos, no KV-cache
// tricks, one token at a time, two-pass softmax.
Reference reference_greedy(const HostModel& model, const std::vector<int>& prompt, int new_tokens);

// Pure: the n-gram prompt-lookup drafter. Finds the latest earlier occurrence of the last `n`
// tokens and proposes up to `k` tokens that followed it (none when there is no occurrence).
std::vector<int> ngram_draft(const std::vector<int>& sequence, int n, int k);

}  // namespace flotilla::kernels::decode
