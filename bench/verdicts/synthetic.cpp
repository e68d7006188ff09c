// flotilla-synthetic — a benchmark with a known true speed, for judging verdicts (bench/verdicts,
// docs/verdicts.md) and for the campaign tests of confirmation.
//
//   flotilla-synthetic --speed R [--work MS] [--sigma S] [--outliers P] [--simulate]
//   flotilla-synthetic --variant base|cand --candidate-speed R [...]   (speed 1 for base, R for cand)
//
// Runs a CPU-bound kernel (a dependent chain of integer mixes, calibrated to take about MS
// milliseconds at speed 1 on this machine) whose amount of work is (1 / R) times a
// multiplicative log-normal noise exp(S * z), doubled with probability P (an outlier: a run that
// lost its core for a while). Its measured wall time is real, so the machine's own noise and
// the contention of a neighbour slot come on top. Prints
//   flotilla-metric: rate=WORK_UNITS_PER_SECOND time_s=SECONDS
// so a candidate with --speed 1.1 is truly 1.1x faster than one with --speed 1.
// With --simulate, no work is done and no time measured: the rate is R / noise exactly, for tests
// that need a known ratio without the machine's noise. Each run draws its noise from the kernel's
// random source (getrandom), as independent runs of a real benchmark would.
// bench/verdicts/run.py runs it in campaigns (full size: its defaults; runs in
// bench/verdicts/RESULTS.md; the ctest bench_verdicts_runs runs 4 small campaigns).
#include <sys/random.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace {

// The chain the kernel runs: each step depends on the last, so it cannot be vectorised away.
std::uint64_t mix_steps(std::uint64_t steps, std::uint64_t x) {
  for (std::uint64_t i = 0; i < steps; ++i) x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ULL + i;
  return x;
}

double uniform() {
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, 0) != sizeof bits) std::abort();
  return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
}

double normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }

double number(const char* flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v)) {
    std::fprintf(stderr, "flotilla-synthetic: %s: '%s' is not a number\n", flag, text);
    std::exit(2);
  }
  return v;
}

// About 2 ns a step on the 2-core development machine: 500,000 steps a millisecond.
constexpr double kStepsPerMs = 500'000;

}  // namespace

int main(int argc, char** argv) {
  double speed = 1, work_ms = 10, sigma = 0.1, outliers = 0.05, candidate_speed = 1;
  bool simulate = false, candidate = false, variant = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--simulate") {
      simulate = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: flotilla-synthetic --speed R [--work MS] [--sigma S] [--outliers P] [--simulate]\n");
      return 2;
    }
    const char* value = argv[++i];
    if (flag == "--speed") speed = number(argv[i - 1], value);
    else if (flag == "--work") work_ms = number(argv[i - 1], value);
    else if (flag == "--sigma") sigma = number(argv[i - 1], value);
    else if (flag == "--outliers") outliers = number(argv[i - 1], value);
    else if (flag == "--candidate-speed") candidate_speed = number(argv[i - 1], value);
    else if (flag == "--variant" && (std::string_view(value) == "base" || std::string_view(value) == "cand")) {
      variant = true;
      candidate = std::string_view(value) == "cand";
    } else {
      std::fprintf(stderr, "flotilla-synthetic: unknown option '%s'\n", argv[i - 1]);
      return 2;
    }
  }
  if (variant) speed = candidate ? candidate_speed : 1.0;
  if (!(speed > 0) || !(work_ms > 0) || sigma < 0 || outliers < 0 || outliers > 1) {
    std::fprintf(stderr, "flotilla-synthetic: --speed and --work must be positive, --outliers in [0, 1]\n");
    return 2;
  }
  double noise = std::exp(sigma * normal());
  if (uniform() < outliers) noise *= 2;
  const double units = work_ms;  // the work at speed 1, in milliseconds of this machine
  if (simulate) {
    std::printf("flotilla-metric: rate=%.17g time_s=%.17g\n", speed / noise, noise / speed * units / 1000);
    return 0;
  }
  const auto steps = static_cast<std::uint64_t>(units * kStepsPerMs * noise / speed);
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t sink = mix_steps(steps, static_cast<std::uint64_t>(uniform() * 1e9));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("flotilla-metric: rate=%.17g time_s=%.17g\n", units / seconds, seconds);
  return sink == 42 ? 1 : 0;  // keeps the chain from being optimised out; practically never 42
}
