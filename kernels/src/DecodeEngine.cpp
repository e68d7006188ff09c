// DecodeEngine.cpp — the seeded transformer, its Kokkos decode engine (greedy and speculative),
// and the double-precision reference (DecodeEngine.h).
#include "DecodeEngine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "DecodeCommon.h"

namespace flotilla::kernels::decode {

namespace {

constexpr float eps = 1e-6f;

std::vector<float> seeded(std::uint64_t seed, std::uint64_t stream, std::size_t count, float scale) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = seeded_uniform(seed, stream, i, scale);
  return v;
}

std::vector<float> seeded_gamma(std::uint64_t seed, std::uint64_t stream, int d) {
  std::vector<float> g = seeded(seed, stream, static_cast<std::size_t>(d), 0.25f);
  for (float& x : g) x += 1.0f;
  return g;
}

int argmax(const float* row, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) best = row[i] > row[best] ? i : best;
  return best;
}

// One weight matrix on the device, in the variant's storage.
struct DeviceWeight {
  Mat w32;
  Mat16 w16;
  DeviceWeight() = default;
  DeviceWeight(const std::vector<float>& host, int rows, int cols, bool bf16) {
    if (bf16) {
      w16 = Mat16("w16", rows, cols);
      auto h = Kokkos::create_mirror_view(w16);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) h(r, c) = float_to_bf16(host[std::size_t(r) * cols + c]);
      Kokkos::deep_copy(w16, h);
    } else {
      w32 = Mat("w32", rows, cols);
      auto h = Kokkos::create_mirror_view(w32);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) h(r, c) = host[std::size_t(r) * cols + c];
      Kokkos::deep_copy(w32, h);
    }
  }
};

Vec device_vec(const std::vector<float>& host) {
  Vec v("gamma", host.size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < host.size(); ++i) h(i) = host[i];
  Kokkos::deep_copy(v, h);
  return v;
}

Mat rows_of(const Mat& m, int count) { return Kokkos::subview(m, std::make_pair(0, count), Kokkos::ALL); }

}  // namespace

HostModel make_model(const ModelShape& s) {
  HostModel m;
  m.shape = s;
  const auto d = static_cast<std::size_t>(s.d_model), f = static_cast<std::size_t>(s.ffn);
  const float in_d = 1.0f / std::sqrt(float(s.d_model)), in_f = 1.0f / std::sqrt(float(s.ffn));
  m.embed = seeded(s.seed, 1, static_cast<std::size_t>(s.vocab) * d, 1.0f);
  for (int l = 0; l < s.layers; ++l) {
    const std::uint64_t b = 16 + 16 * static_cast<std::uint64_t>(l);
    m.layers.push_back({seeded(s.seed, b, 3 * d * d, in_d), seeded(s.seed, b + 1, d * d, in_d),
                        seeded(s.seed, b + 2, f * d, in_d), seeded(s.seed, b + 3, d * f, in_f),
                        seeded_gamma(s.seed, b + 4, s.d_model), seeded_gamma(s.seed, b + 5, s.d_model)});
  }
  m.g_final = seeded_gamma(s.seed, 2, s.d_model);
  m.lm_head = seeded(s.seed, 3, static_cast<std::size_t>(s.vocab) * d, in_d);
  return m;
}

float position_signal(int position, int column, int d_model) {
  const double angle = position / std::pow(10000.0, double(column - column % 2) / d_model);
  return static_cast<float>(column % 2 ? std::cos(angle) : std::sin(angle));
}

std::vector<int> seeded_prompt(int vocab, int length, std::uint64_t seed) {
  std::vector<int> phrase(8), prompt;
  for (std::size_t i = 0; i < phrase.size(); ++i) phrase[i] = int(splitmix(seed * 31 + i) % std::uint64_t(vocab));
  for (int i = 0; i < length; ++i) {
    const std::uint64_t r = splitmix(seed * 131 + 7 + std::uint64_t(i));
    prompt.push_back(r % 5 == 0 ? int((r >> 8) % std::uint64_t(vocab)) : phrase[std::size_t(i) % phrase.size()]);
  }
  return prompt;
}

std::vector<int> ngram_draft(const std::vector<int>& seq, int n, int k) {
  const int size = static_cast<int>(seq.size());
  if (n < 1 || k < 1 || size <= n) return {};
  for (int start = size - n - 1; start >= 0; --start) {  // latest earlier occurrence first
    if (!std::equal(seq.begin() + start, seq.begin() + start + n, seq.end() - n)) continue;
    const int from = start + n;
    const int to = std::min(size, from + k);
    return std::vector<int>(seq.begin() + from, seq.begin() + to);
  }
  return {};
}

// ---- the engine -----------------------------------------------------------------------------

struct Engine::Impl {
  struct Layer {
    DeviceWeight wqkv, wo, w1, w2;
    Vec g_attn, g_mlp;
  };
  struct Cache {
    std::vector<Mat> k, v;
    int valid = 0;  // positions whose K/V are those of the current sequence
  };

  ModelShape s;
  EngineVariant var;
  const HostModel* host;
  std::vector<Layer> layers;
  DeviceWeight lm_head;
  Vec g_final;
  Mat x, delta, n, qkv, att, h, logits;
  Vec gemv_ws, attn_ws;
  Cache main, draft;

  Impl(const HostModel& model, const EngineVariant& v, int max_len) : s(model.shape), var(v), host(&model) {
    const int d = s.d_model;
    for (const HostModel::Layer& l : model.layers) {
      layers.push_back({DeviceWeight(l.wqkv, 3 * d, d, v.bf16), DeviceWeight(l.wo, d, d, v.bf16),
                        DeviceWeight(l.w1, s.ffn, d, v.bf16), DeviceWeight(l.w2, d, s.ffn, v.bf16),
                        device_vec(l.g_attn), device_vec(l.g_mlp)});
    }
    lm_head = DeviceWeight(model.lm_head, s.vocab, d, v.bf16);
    g_final = device_vec(model.g_final);
    const int b = max_batch;
    x = Mat("x", b, d), delta = Mat("delta", b, d), n = Mat("n", b, d), qkv = Mat("qkv", b, 3 * d);
    att = Mat("att", b, d), h = Mat("h", b, s.ffn), logits = Mat("logits", b, s.vocab);
    const int widest = std::max({3 * d, s.ffn, s.vocab});
    gemv_ws = Vec("gemv_ws", gemv_workspace_size(v.gemv, b, widest));
    attn_ws = Vec("attn_ws", attention_workspace_size(v.attn, b, s.heads, d / s.heads));
    for (Cache* c : {&main, &draft}) {
      for (int l = 0; l < s.layers; ++l) {
        c->k.push_back(Mat("k", max_len, d));
        c->v.push_back(Mat("v", max_len, d));
      }
    }
  }

  template <class F>
  static void timed(double& slot, F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    Kokkos::fence();
    slot += seconds_since(start);
  }

  void mm(const DeviceWeight& w, Mat in, Mat out) {
    if (w.w16.extent(0) > 0) {
      gemv(var.gemv, w.w16, in, out, gemv_ws);
    } else {
      gemv(var.gemv, w.w32, in, out, gemv_ws);
    }
  }

  // Runs tokens at positions pos0.. through the first `depth` layers; logits rows 0..m-1 on return.
  void forward(Cache& cache, const int* tokens, int m, int pos0, int depth, Profile& prof) {
    const int d = s.d_model;
    Mat X = rows_of(x, m), D = rows_of(delta, m), N = rows_of(n, m), QKV = rows_of(qkv, m);
    Mat A = rows_of(att, m), H = rows_of(h, m), L = rows_of(logits, m);
    // The embedding is host work, counted in `other` (the remainder of the decode time).
    auto dh = Kokkos::create_mirror_view(D);
    for (int t = 0; t < m; ++t)
      for (int c = 0; c < d; ++c)
        dh(t, c) = host->embed[std::size_t(tokens[t]) * d + c] + position_signal(pos0 + t, c, d);
    Kokkos::deep_copy(D, dh);
    Kokkos::deep_copy(X, 0.0f);
    timed(prof.norm, [&] { residual_rmsnorm(var.norm, X, D, layers[0].g_attn, N, eps); });
    for (int l = 0; l < depth; ++l) {
      Layer& w = layers[std::size_t(l)];
      timed(prof.gemv, [&] { mm(w.wqkv, N, QKV); });
      Mat kc = cache.k[std::size_t(l)], vc = cache.v[std::size_t(l)];
      timed(prof.attention, [&] {
        Kokkos::parallel_for(
            "flotilla_kv_write", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, d}),
            KOKKOS_LAMBDA(const int t, const int c) {
              kc(pos0 + t, c) = QKV(t, d + c);
              vc(pos0 + t, c) = QKV(t, 2 * d + c);
            });
        decode_attention(var.attn, QKV, 0, kc, vc, pos0, s.heads, A, attn_ws);
      });
      timed(prof.gemv, [&] { mm(w.wo, A, D); });
      timed(prof.norm, [&] { residual_rmsnorm(var.norm, X, D, w.g_mlp, N, eps); });
      timed(prof.gemv, [&] { mm(w.w1, N, H); });
      timed(prof.other, [&] {
        Kokkos::parallel_for(
            "flotilla_relu", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {m, s.ffn}),
            KOKKOS_LAMBDA(const int t, const int c) { H(t, c) = H(t, c) > 0.0f ? H(t, c) : 0.0f; });
      });
      timed(prof.gemv, [&] { mm(w.w2, H, D); });
      const Vec next = l + 1 < depth ? layers[std::size_t(l) + 1].g_attn : g_final;
      timed(prof.norm, [&] { residual_rmsnorm(var.norm, X, D, next, N, eps); });
    }
    timed(prof.gemv, [&] { mm(lm_head, N, L); });
    cache.valid = pos0 + m;
  }

  // Feeds seq[cache.valid ..) in batches; returns the greedy token after the last one.
  int catch_up(Cache& cache, const std::vector<int>& seq, int depth, Profile& prof) {
    int last = -1;
    while (cache.valid < static_cast<int>(seq.size())) {
      const int m = std::min(max_batch, static_cast<int>(seq.size()) - cache.valid);
      forward(cache, seq.data() + cache.valid, m, cache.valid, depth, prof);
      last = next_tokens(m).back();
    }
    return last;
  }

  std::vector<int> next_tokens(int m) {
    auto lh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows_of(logits, m));
    std::vector<int> out(static_cast<std::size_t>(m));
    for (int t = 0; t < m; ++t) out[std::size_t(t)] = argmax(&lh(t, 0), s.vocab);
    return out;
  }

  std::vector<int> propose(const std::vector<int>& seq, int k) {
    if (k <= 0 || var.drafter == Drafter::none) return {};
    if (var.drafter == Drafter::ngram) return ngram_draft(seq, var.ngram, k);
    Profile ignored;  // the drafter's time is measured as a whole, as `draft`
    std::vector<int> drafts{catch_up(draft, seq, var.draft_layers, ignored)};
    while (static_cast<int>(drafts.size()) < k) {
      forward(draft, &drafts.back(), 1, draft.valid, var.draft_layers, ignored);
      drafts.push_back(next_tokens(1)[0]);
    }
    return drafts;
  }

  Generation generate(const std::vector<int>& prompt, int new_tokens) {
    if (prompt.empty()) throw std::logic_error("generate: empty prompt");
    std::vector<int> seq = prompt;
    Profile prefill;
    main.valid = draft.valid = 0;
    std::vector<int> head(prompt.begin(), prompt.end() - 1);  // the last prompt token is decoded
    catch_up(main, head, s.layers, prefill);
    if (var.drafter == Drafter::model) catch_up(draft, head, var.draft_layers, prefill);

    Generation g;
    const auto start = std::chrono::steady_clock::now();
    while (static_cast<int>(g.tokens.size()) < new_tokens) {
      const int room = new_tokens - static_cast<int>(g.tokens.size()) - 1;
      std::vector<int> batch{seq.back()};
      timed(g.profile.draft, [&] {
        for (int t : propose(seq, std::min(var.k, std::min(room, max_batch - 1)))) batch.push_back(t);
      });
      const int n0 = static_cast<int>(seq.size());
      forward(main, batch.data(), static_cast<int>(batch.size()), n0 - 1, s.layers, g.profile);
      const std::vector<int> greedy = next_tokens(static_cast<int>(batch.size()));
      std::size_t a = 0;
      while (a + 1 < batch.size() && batch[a + 1] == greedy[a]) ++a;
      for (std::size_t i = 0; i <= a; ++i) {
        const int t = i < a ? batch[i + 1] : greedy[a];
        seq.push_back(t);
        g.tokens.push_back(t);
      }
      main.valid = n0 + static_cast<int>(a);  // K/V of rejected drafts are overwritten later
      draft.valid = std::min(draft.valid, n0 + static_cast<int>(a));
      ++g.forwards;
      g.drafted += static_cast<int>(batch.size()) - 1;
      g.accepted += static_cast<int>(a);
    }
    g.time_s = seconds_since(start);
    Profile& p = g.profile;
    p.other = std::max(0.0, g.time_s - p.norm - p.gemv - p.attention - p.draft);
    return g;
  }
};

Engine::Engine(const HostModel& model, const EngineVariant& variant, int max_len)
    : m_impl(std::make_unique<Impl>(model, variant, max_len)) {}
Engine::~Engine() = default;
Generation Engine::generate(const std::vector<int>& prompt, int new_tokens) {
  return m_impl->generate(prompt, new_tokens);
}

// ---- the reference --------------------------------------------------------------------------

namespace {

using Dvec = std::vector<double>;

Dvec matvec(const std::vector<float>& w, const Dvec& x, int rows) {
  const std::size_t cols = x.size();
  Dvec y(static_cast<std::size_t>(rows), 0.0);
  for (std::size_t r = 0; r < y.size(); ++r)
    for (std::size_t c = 0; c < cols; ++c) y[r] += double(w[r * cols + c]) * x[c];
  return y;
}

Dvec rmsnorm(const Dvec& x, const std::vector<float>& gamma) {
  double sum = 0;
  for (double v : x) sum += v * v;
  const double scale = 1.0 / std::sqrt(sum / double(x.size()) + double(eps));
  Dvec y(x.size());
  for (std::size_t c = 0; c < x.size(); ++c) y[c] = x[c] * scale * gamma[c];
  return y;
}

}  // namespace

Reference reference_greedy(const HostModel& model, const std::vector<int>& prompt, int new_tokens) {
  const ModelShape& s = model.shape;
  const std::size_t d = static_cast<std::size_t>(s.d_model), hd = d / static_cast<std::size_t>(s.heads);
  std::vector<std::vector<Dvec>> keys(model.layers.size()), values(model.layers.size());
  std::vector<int> seq = prompt;
  Reference ref;
  ref.min_margin = INFINITY;
  for (std::size_t pos = 0; ref.tokens.size() < static_cast<std::size_t>(new_tokens); ++pos) {
    Dvec x(d);
    for (std::size_t c = 0; c < d; ++c)
      x[c] = double(model.embed[std::size_t(seq[pos]) * d + c]) + position_signal(int(pos), int(c), s.d_model);
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
      const HostModel::Layer& w = model.layers[l];
      const Dvec qkv = matvec(w.wqkv, rmsnorm(x, w.g_attn), 3 * s.d_model);
      keys[l].emplace_back(qkv.begin() + long(d), qkv.begin() + long(2 * d));
      values[l].emplace_back(qkv.begin() + long(2 * d), qkv.end());
      Dvec att(d, 0.0);
      for (std::size_t h = 0; h < std::size_t(s.heads); ++h) {
        Dvec score(pos + 1);
        for (std::size_t j = 0; j <= pos; ++j) {
          double dot = 0;
          for (std::size_t i = 0; i < hd; ++i) dot += qkv[h * hd + i] * keys[l][j][h * hd + i];
          score[j] = dot / std::sqrt(double(hd));
        }
        const double top = *std::max_element(score.begin(), score.end());
        double sum = 0;
        for (double& v : score) sum += (v = std::exp(v - top));
        for (std::size_t j = 0; j <= pos; ++j)
          for (std::size_t i = 0; i < hd; ++i) att[h * hd + i] += score[j] / sum * values[l][j][h * hd + i];
      }
      const Dvec o = matvec(w.wo, att, s.d_model);
      for (std::size_t c = 0; c < d; ++c) x[c] += o[c];
      Dvec hidden = matvec(w.w1, rmsnorm(x, w.g_mlp), s.ffn);
      for (double& v : hidden) v = std::max(v, 0.0);
      const Dvec f = matvec(w.w2, hidden, s.d_model);
      for (std::size_t c = 0; c < d; ++c) x[c] += f[c];
    }
    if (pos + 1 < seq.size()) continue;  // still reading the prompt
    const Dvec logits = matvec(model.lm_head, rmsnorm(x, model.g_final), s.vocab);
    const auto best = std::max_element(logits.begin(), logits.end());  // first maximum: lowest id
    double second = -INFINITY;
    for (auto it = logits.begin(); it != logits.end(); ++it)
      if (it != best) second = std::max(second, *it);
    ref.min_margin = std::min(ref.min_margin, *best - second);
    seq.push_back(static_cast<int>(best - logits.begin()));
    ref.tokens.push_back(seq.back());
  }
  return ref;
}

}  // namespace flotilla::kernels::decode
