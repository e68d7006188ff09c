// kernels — the decode-step families and the decode engine against baselines measured in the
// same run: ./build/bench/kernels [--quick]
//
// 1. Roofline: a STREAM-style copy and triad over 3 x 128 MB arrays (Kokkos, this build's
//    backend), best of 5: the memory bandwidth the bandwidth-bound kernels can at best reach.
// 2. For rmsnorm, gemv and attention: the family's default variant (the baseline) and a grid of
//    variants, each the median of 3 benchmarks; the fastest variant that passes verification (all
//    shards, the family's tolerance) is "best". Printed: GB/s, fraction of triad and of copy, gain,
//    and the fraction of copy measured side by side (best and a copy pass alternated, 7 rounds).
// 3. The decode intent "maximize decode tokens/s, outputs unchanged", staged by the bottleneck
//    profile (the components of flotilla/kernels/DecodeStages.h, the rules of the scheduler's
//    flotilla/scheduler/Stages.h, as a campaign with [intent] stages = bottleneck): profile the incumbent, explore the parameters of
//    its largest component (seeded sample of the stage's grid, median of 5), verify the fastest
//    candidates in order (tokens identical to greedy, 2 prompts) until one passes and beats the
//    incumbent, accept or roll back, re-profile, stop when a stage gains < 3%.
// 4. The engine at the chosen kernels against its weight-streaming bound (copy bandwidth / bytes
//    of weights per forward), and speculative decoding (n-gram, draft model) against greedy.
// Ends with one JSON line. Full size: no arguments (about 5 minutes); runs in
// bench/kernels/RESULTS.md. --quick shrinks every size (the ctest bench_kernels_verify).
// The correctness half: each family's baseline (its defaults) and the variant reported as its
// best verify on every shard, and the decode engine's baseline and its final choice produce the
// tokens of greedy decoding; otherwise it exits 1 naming them. A variant that fails verification
// on the way is rolled back and printed, as a campaign would; that is not a failure.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "flotilla/kernels/DecodeStages.h"
#include "flotilla/kernels/Family.h"
#include "flotilla/kernels/Runtime.h"
#include "flotilla/scheduler/Stages.h"

namespace fk = flotilla::kernels;
namespace fs = flotilla::scheduler;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

struct Stream {
  double copy_gbps = 0, triad_gbps = 0;
};

Stream stream_roofline(std::size_t n) {
  Kokkos::View<double*> a("a", n), b("b", n), c("c", n);
  Kokkos::deep_copy(a, 1.0);
  Kokkos::deep_copy(b, 2.0);
  Kokkos::deep_copy(c, 0.0);
  Stream s;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    Kokkos::parallel_for("copy", n, KOKKOS_LAMBDA(const std::size_t i) { c(i) = a(i); });
    Kokkos::fence();
    const double tc = std::chrono::duration<double>(Clock::now() - t0).count();
    t0 = Clock::now();
    Kokkos::parallel_for("triad", n, KOKKOS_LAMBDA(const std::size_t i) { a(i) = b(i) + 3.0 * c(i); });
    Kokkos::fence();
    const double tt = std::chrono::duration<double>(Clock::now() - t0).count();
    s.copy_gbps = std::max(s.copy_gbps, 2.0 * n * sizeof(double) / tc / 1e9);
    s.triad_gbps = std::max(s.triad_gbps, 3.0 * n * sizeof(double) / tt / 1e9);
  }
  return s;
}

// One copy pass over arrays beyond the caches, for interleaving with a kernel (below).
class CopyProbe {
 public:
  explicit CopyProbe(std::size_t n) : m_a("probe_a", n), m_c("probe_c", n) {
    Kokkos::deep_copy(m_a, 1.0);
    Kokkos::deep_copy(m_c, 0.0);
  }
  double gbps() const {
    auto a = m_a;
    auto c = m_c;
    const auto t0 = Clock::now();
    Kokkos::parallel_for("copy_probe", a.extent(0), KOKKOS_LAMBDA(const std::size_t i) { c(i) = a(i); });
    Kokkos::fence();
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    return 2.0 * a.extent(0) * sizeof(double) / t / 1e9;
  }

 private:
  Kokkos::View<double*> m_a, m_c;
};

// What failed the correctness half, one line each; the bench exits 1 when there is one.
std::vector<std::string> problems;

double metric(const fk::BenchmarkResult& r, const std::string& name) {
  for (const fk::Metric& m : r.metrics)
    if (m.name == name) return m.value;
  return 0;
}

struct Measured {
  fk::Params params;
  double value = 0;                       // median of the repeats
  std::map<std::string, double> metrics;  // of the median run
};

Measured measure(const fk::KernelFamily& f, const fk::Params& p, const std::string& objective, int repeats) {
  std::vector<fk::BenchmarkResult> runs;
  for (int r = 0; r < repeats; ++r) runs.push_back(f.benchmark(p));
  std::sort(runs.begin(), runs.end(),
            [&](const auto& a, const auto& b) { return metric(a, objective) < metric(b, objective); });
  const fk::BenchmarkResult& mid = runs[runs.size() / 2];
  Measured m{p, metric(mid, objective), {}};
  for (const fk::Metric& x : mid.metrics) m.metrics[x.name] = x.value;
  return m;
}

// Interleaved A/B: `rounds` rounds of one run of a then one of b. The machine is shared and its
// speed drifts; the per-round ratio b/a is far steadier than either figure alone.
struct AB {
  double a = 0, b = 0, ratio = 0;  // medians
};
AB ab_compare(const fk::KernelFamily& f, const fk::Params& a, const fk::Params& b, const std::string& objective,
              int rounds) {
  std::vector<double> va, vb, ratio;
  for (int r = 0; r < rounds; ++r) {
    va.push_back(metric(f.benchmark(a), objective));
    vb.push_back(metric(f.benchmark(b), objective));
    ratio.push_back(vb.back() / va.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return AB{median(va), median(vb), median(ratio)};
}

std::string fmt_ratio(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", ratio);
  return text;
}

bool verified(const fk::KernelFamily& f, const fk::Params& p, int shards, std::string* why) {
  for (int s = 0; s < shards; ++s) {
    const fk::VerifyResult v = f.verify(p, s, shards);
    if (v.outcome != fk::Outcome::ok) {
      *why = v.message;
      return false;
    }
  }
  return true;
}

std::string text(const fk::Params& p, const fk::Params& shown) {
  std::string t;
  for (const auto& [k, v] : p)
    if (shown.count(k)) t += (t.empty() ? "" : " ") + k + "=" + v;
  return t.empty() ? "(defaults)" : t;
}

// All combinations of `grid`, each on top of `base`.
std::vector<fk::Params> expand(const fk::Params& base, const std::map<std::string, std::vector<std::string>>& grid) {
  std::vector<fk::Params> out{base};
  for (const auto& [name, values] : grid) {
    std::vector<fk::Params> next;
    for (const fk::Params& p : out)
      for (const std::string& v : values) {
        fk::Params q = p;
        q[name] = v;
        next.push_back(q);
      }
    out = next;
  }
  return out;
}

json family_best(const char* name, const fk::Params& base, const std::map<std::string, std::vector<std::string>>& grid,
                 const Stream& roof, const CopyProbe& probe, int repeats) {
  const fk::KernelFamily& f = *fk::find_family(name);
  fk::Params shown;
  for (const auto& [k, v] : grid) shown[k] = "";
  const fk::Params resolved = fk::resolve_params(f, base);  // every parameter named: comparable maps
  (void)f.benchmark(resolved);  // warm-up: first touch of the allocator's pages, caches
  std::vector<Measured> all;
  for (const fk::Params& p : expand(resolved, grid)) all.push_back(measure(f, p, "gbps", repeats));
  // The baseline (the family's defaults) is one of the grid's points, measured in the same sweep.
  const auto in_grid = std::find_if(all.begin(), all.end(), [&](const Measured& m) { return m.params == resolved; });
  const Measured baseline = in_grid != all.end() ? *in_grid : measure(f, resolved, "gbps", repeats);
  std::sort(all.begin(), all.end(), [](const Measured& a, const Measured& b) { return a.value > b.value; });
  std::string why;
  const Measured* best = nullptr;
  int rolled_back = 0;
  for (const Measured& m : all) {
    if (verified(f, m.params, 2, &why)) {
      best = &m;
      break;
    }
    ++rolled_back;
    std::printf("  rolled back %s: %s\n", text(m.params, shown).c_str(), why.c_str());
  }
  if (!verified(f, baseline.params, 2, &why))
    problems.push_back(std::string(name) + ": the baseline " + text(resolved, shown) + " does not verify: " + why);
  if (!best) {
    problems.push_back(std::string(name) + ": no variant verifies, not even the baseline");
    best = &baseline;
  }
  // The fraction of copy the target is judged by: the best variant and one copy pass alternated
  // over 7 rounds, the median of the per-round ratios. Measured side by side, both see the same
  // load; the run-start roofline (best of 5) is minutes older than the kernel's median of 3.
  std::vector<double> ratios;
  for (int round = 0; round < 7; ++round) {
    const double copy = probe.gbps();
    ratios.push_back(metric(f.benchmark(best->params), "gbps") / copy);
  }
  std::sort(ratios.begin(), ratios.end());
  const double fraction_of_copy = ratios[ratios.size() / 2];
  std::printf("%-9s baseline %-40s %7.2f GB/s (%4.1f%% of triad)\n", name, text(resolved, shown).c_str(), baseline.value,
              100 * baseline.value / roof.triad_gbps);
  std::printf(
      "%-9s best     %-40s %7.2f GB/s (%4.1f%% of triad, %4.1f%% of copy), %.2fx baseline, %zu variants, "
      "%d rolled back\n",
      name, text(best->params, shown).c_str(), best->value, 100 * best->value / roof.triad_gbps,
      100 * best->value / roof.copy_gbps, best->value / baseline.value, all.size(), rolled_back);
  std::printf("%-9s best against copy, interleaved (median of 7 rounds): %4.1f%% of copy (target 80%%)\n", name,
              100 * fraction_of_copy);
  return json{{"baseline_gbps", baseline.value},
              {"best_gbps", best->value},
              {"best", text(best->params, shown)},
              {"best_fraction_of_triad", best->value / roof.triad_gbps},
              {"best_fraction_of_copy", fraction_of_copy},
              {"best_fraction_of_run_start_copy", best->value / roof.copy_gbps},
              {"gain", best->value / baseline.value},
              {"variants", all.size()},
              {"rolled_back", rolled_back}};
}

// Candidate values of each decode parameter that a stage may explore.
const std::map<std::string, std::vector<std::string>> decode_values = {
    {"norm", {"separate", "fused"}},     {"norm_vec", {"1", "4", "8"}},
    {"gemv_unroll", {"1", "2", "4", "8"}}, {"gemv_rows", {"8", "32"}},
    {"gemv_split_k", {"1", "4"}},       {"weights", {"fp32", "bf16"}},
    {"drafter", {"none", "ngram", "model"}}, {"k", {"2", "4", "8"}},
    {"ngram", {"1", "2", "3"}},         {"draft_layers", {"1", "2"}},
    {"attn_splits", {"1", "4", "16"}}, {"attn_unroll", {"1", "4", "8"}},
};

json decode_intent(const fk::Params& model, int budget, int repeats, double threshold) {
  const fk::KernelFamily& f = *fk::find_family("decode");
  const fk::Params baseline_params = fk::resolve_params(f, model);  // every engine parameter at its default
  (void)f.benchmark(baseline_params);                                // warm-up
  fk::Params incumbent = baseline_params;
  Measured inc = measure(f, incumbent, "tokens_per_s", repeats);
  std::string why;
  const bool baseline_ok = verified(f, incumbent, 2, &why);
  std::printf("decode baseline: plain greedy, naive kernels: %.1f tokens/s, verified: %s\n", inc.value,
              baseline_ok ? "yes" : why.c_str());
  if (!baseline_ok) problems.push_back("decode: the baseline does not verify: " + why);
  const double baseline = inc.value;
  std::vector<fs::Component> components;  // the decode engine's, for the scheduler's stage rules
  for (const auto& c : fk::decode_components()) components.push_back({c.name, c.share_metric, c.params});
  std::vector<fs::StageRecord> history;
  json stages = json::array();
  std::mt19937_64 rng(7);
  for (;;) {
    std::map<std::string, double> shares;
    for (const auto& [k, v] : inc.metrics)
      if (k.rfind("share_", 0) == 0) shares[k] = v;
    const fs::StageDecision d = fs::next_stage(components, shares, history, threshold);
    if (d.stop) {
      std::printf("stop: %s\n", d.reason.c_str());
      break;
    }
    const fk::DecodeComponent& c =
        *std::find_if(fk::decode_components().begin(), fk::decode_components().end(),
                      [&](const fk::DecodeComponent& x) { return x.name == d.component; });
    std::map<std::string, std::vector<std::string>> grid;
    fk::Params shown;
    for (const std::string& p : c.params) grid[p] = decode_values.at(p), shown[p] = "";
    std::vector<fk::Params> space;
    for (const fk::Params& p : expand(incumbent, grid))
      if (p != incumbent) space.push_back(p);
    std::shuffle(space.begin(), space.end(), rng);
    if (static_cast<int>(space.size()) > budget) space.resize(std::size_t(budget));
    // The incumbent is measured again in the stage, so that the stage compares like with like.
    inc = measure(f, incumbent, "tokens_per_s", repeats);
    std::vector<Measured> all;
    for (const fk::Params& p : space) all.push_back(measure(f, p, "tokens_per_s", repeats));
    std::sort(all.begin(), all.end(), [](const Measured& a, const Measured& b) { return a.value > b.value; });
    struct {
      double before, after;  // the incumbent's tokens/s when the stage started and ended
    } rec{inc.value, inc.value};
    std::string chosen = "none (incumbent kept)", verification = "-";
    int rolled_back = 0;
    for (const Measured& m : all) {
      if (m.value <= inc.value) break;
      if (!verified(f, m.params, 2, &why)) {
        ++rolled_back;
        std::printf("  rolled back %s: %s\n", text(m.params, shown).c_str(), why.c_str());
        continue;
      }
      // Accept only what an interleaved A/B against the incumbent confirms.
      const AB ab = ab_compare(f, incumbent, m.params, "tokens_per_s", repeats);
      rec.before = ab.a;
      if (ab.ratio > 1.0) {
        incumbent = m.params;
        inc = m;  // its profile drives the next stage
        rec.after = ab.a * ab.ratio;
        chosen = text(m.params, shown);
        verification = "tokens identical to greedy (2 prompts)";
      } else {
        rec.after = ab.a;  // nothing accepted: the incumbent stays, the stage gained nothing
        chosen = "none: the A/B did not confirm " + text(m.params, shown) + " (" + fmt_ratio(ab.ratio) + ")";
      }
      break;
    }
    history.push_back({c.name, fs::stage_gain(rec.before, rec.after, /*maximize=*/true)});
    std::printf("stage %zu: bottleneck %s (%s); explored %zu; chosen %s; %.1f -> %.1f tokens/s (%+.1f%%); %d rolled back; %s\n",
                history.size(), c.name.c_str(), d.reason.c_str(), all.size(), chosen.c_str(), rec.before, rec.after,
                100 * (rec.after / rec.before - 1), rolled_back, verification.c_str());
    stages.push_back({{"bottleneck", c.name}, {"share", shares[c.share_metric]}, {"explored", all.size()},
                      {"chosen", chosen}, {"before", rec.before}, {"after", rec.after}, {"rolled_back", rolled_back}});
  }
  // The final comparison: baseline and best interleaved over 7 rounds, the median per-round ratio.
  if (!verified(f, incumbent, 2, &why)) problems.push_back("decode: the final choice does not verify: " + why);
  const AB final = ab_compare(f, baseline_params, incumbent, "tokens_per_s", 7);
  const double base_again = final.a, best_again = final.b;
  fk::Params changed;
  for (const auto& [k, v] : incumbent)
    if (baseline_params.at(k) != v) changed[k] = v;
  std::printf("decode: baseline %.1f tokens/s -> best %.1f tokens/s, %.2fx (median of 7 interleaved rounds): %s\n",
              base_again, best_again, final.ratio, text(changed, changed).c_str());
  json best_params = json::object();
  for (const auto& [k, v] : incumbent) best_params[k] = v;
  return json{{"baseline_tokens_per_s", base_again}, {"best_tokens_per_s", best_again}, {"gain", final.ratio},
              {"best", text(changed, changed)}, {"first_baseline_tokens_per_s", baseline}, {"stages", stages},
              {"best_params", best_params}};
}

// Bytes of weights one decode forward streams: per layer wqkv (3 d^2), wo (d^2), w1 and w2
// (2 d ffn), then lm_head (vocab d); 4 bytes each in fp32, 2 in bf16 (DecodeEngine.h). Greedy
// decoding reads them once per token, so copy bandwidth / these bytes bounds its tokens/s; a
// speculative forward verifies several tokens per pass, which is how it can beat that bound.
double weight_bytes_per_forward(const fk::Params& p) {
  const double d = std::stod(p.at("d_model")), ffn = std::stod(p.at("ffn")), layers = std::stod(p.at("layers"));
  const double vocab = std::stod(p.at("vocab")), bytes = p.at("weights") == "bf16" ? 2 : 4;
  return bytes * (layers * (4 * d * d + 2 * d * ffn) + vocab * d);
}

// The engine at the chosen kernel settings, greedy against both drafters (interleaved, median
// per-round ratio), next to the weight-streaming bound measured with this run's copy bandwidth.
json decode_bounds(const fk::Params& model, const json& best, const Stream& roof, int rounds) {
  const fk::KernelFamily& f = *fk::find_family("decode");
  fk::Params greedy = fk::resolve_params(f, model);
  if (best.contains("best_params"))
    for (const auto& [k, v] : best["best_params"].items()) greedy[k] = v.get<std::string>();
  greedy["drafter"] = "none";
  const double bytes = weight_bytes_per_forward(greedy);
  const double bound = roof.copy_gbps * 1e9 / bytes;
  const Measured plain = measure(f, greedy, "tokens_per_s", rounds);
  std::printf("decode bound: %.2f MB of weights per forward; copy %.2f GB/s -> at most %.1f greedy tokens/s; "
              "greedy at the chosen kernels %.1f tokens/s = %.2f of the bound\n",
              bytes / 1e6, roof.copy_gbps, bound, plain.value, plain.value / bound);
  json out{{"weight_bytes_per_forward", bytes}, {"streaming_bound_tokens_per_s", bound},
           {"greedy_tokens_per_s", plain.value}, {"greedy_fraction_of_bound", plain.value / bound}};
  for (const char* drafter : {"ngram", "model"}) {
    fk::Params spec = greedy;
    spec["drafter"] = drafter;
    const AB ab = ab_compare(f, greedy, spec, "tokens_per_s", rounds);
    const Measured m = measure(f, spec, "tokens_per_s", 1);
    std::printf("speculative %-5s k=%s: %.1f vs greedy %.1f tokens/s: %.2fx (median of %d interleaved rounds), "
                "accept rate %.2f, %.2f tokens per forward\n",
                drafter, spec.at("k").c_str(), ab.b, ab.a, ab.ratio, rounds, m.metrics.count("accept_rate") ? m.metrics.at("accept_rate") : 0.0,
                m.metrics.count("tokens_per_forward") ? m.metrics.at("tokens_per_forward") : 0.0);
    out[std::string("speculative_") + drafter] = {
        {"tokens_per_s", ab.b}, {"greedy_tokens_per_s", ab.a}, {"ratio", ab.ratio},
        {"accept_rate", m.metrics.count("accept_rate") ? m.metrics.at("accept_rate") : 0.0},
        {"tokens_per_forward", m.metrics.count("tokens_per_forward") ? m.metrics.at("tokens_per_forward") : 0.0}};
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines appear as they are measured
  fk::Runtime runtime;
  const int repeats = 3;
  const Stream roof = stream_roofline(quick ? (1u << 22) : (1u << 24));
  const CopyProbe probe(quick ? (1u << 22) : (1u << 24));
  std::printf("roofline (STREAM, Kokkos %s): copy %.2f GB/s, triad %.2f GB/s\n",
              Kokkos::DefaultExecutionSpace::name(), roof.copy_gbps, roof.triad_gbps);
  json out{{"bench", "kernels"}, {"backend", Kokkos::DefaultExecutionSpace::name()},
           {"copy_gbps", roof.copy_gbps}, {"triad_gbps", roof.triad_gbps}};
  const std::string iters = quick ? "3" : "10";
  const std::string rows = quick ? "64" : "1024";  // 1024 x 8192 floats: 32 MB per array, beyond the caches
  out["rmsnorm"] = family_best("rmsnorm", {{"rows", rows}, {"d", "8192"}, {"iters", iters}},
                               {{"impl", {"separate", "fused"}}, {"vec", {"1", "4", "8"}}, {"rows_per_team", {"1", "16"}}},
                               roof, probe, repeats);
  out["gemv"] = family_best(
      "gemv", {{"rows", quick ? "1024" : "4096"}, {"cols", quick ? "1024" : "4096"}, {"iters", iters}},
      {{"weights", {"fp32", "bf16"}}, {"unroll", {"1", "4", "8"}}, {"interleave", {"1", "4"}}, {"split_k", {"1", "4"}}},
      roof, probe, repeats);
  // 16,384 cached tokens of 8 heads x 64: K and V are 32 MB each, beyond the caches.
  out["attention"] = family_best(
      "attention", {{"seq_len", quick ? "2048" : "16384"}, {"heads", "8"}, {"head_dim", "64"}, {"iters", iters}},
      {{"heads_per_team", {"1", "8"}}, {"unroll", {"1", "4", "8"}}, {"splits", {"1", "16"}}, {"prefetch", {"0", "2"}}},
      roof, probe, repeats);
  const fk::Params model = quick ? fk::Params{{"layers", "2"}, {"d_model", "128"}, {"ffn", "256"}, {"vocab", "256"}, {"tokens", "32"}}
                                 : fk::Params{{"tokens", "64"}};
  out["decode"] = decode_intent(model, quick ? 4 : 12, quick ? 3 : 5, 0.03);  // tokens/s is the noisiest: 5 repeats
  out["decode_bounds"] = decode_bounds(model, out["decode"], roof, quick ? 3 : 5);
  std::printf("%s\n", out.dump().c_str());
  for (const std::string& problem : problems) std::fprintf(stderr, "kernels: %s\n", problem.c_str());
  return problems.empty() ? 0 : 1;
}
