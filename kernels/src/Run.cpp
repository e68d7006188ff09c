// Run.cpp — a variant run as flotilla-kernel runs it (Run.h): the one place that turns a
// family's result values into the executable's text and exit status.
#include "flotilla/kernels/Run.h"

#include <cstdio>
#include <exception>

namespace flotilla::kernels {
namespace {

std::string format_metrics(const Metrics& metrics) {
  std::string line = "flotilla-metric:";
  for (const Metric& metric : metrics) {
    char value[32];
    std::snprintf(value, sizeof value, "%.6g", metric.value);
    line += " " + metric.name + "=" + value;
  }
  return line;
}

std::string describe(const KernelFamily& family, const Params& params) {
  std::string text(family.name());
  for (const auto& [name, value] : params) text += " " + name + "=" + value;
  return text;
}

RunReport benchmark(const KernelFamily& family, const Params& params) {
  const BenchmarkResult result = family.benchmark(params);
  const std::string prefix = "flotilla-kernel " + std::string(family.name());
  if (result.outcome == Outcome::skipped) return {kExitSkipped, "", prefix + ": skipped: " + result.message + "\n"};
  if (result.outcome == Outcome::failed) return {kExitFailed, "", prefix + ": failed: " + result.message + "\n"};
  if (result.quiet) return {kExitOk, "", ""};
  return {kExitOk, "benchmark " + describe(family, params) + "\n" + format_metrics(result.metrics) + "\n", ""};
}

RunReport verify(const KernelFamily& family, const Params& params, int shard, int shards) {
  const VerifyResult result = family.verify(params, shard, shards);
  if (result.outcome == Outcome::skipped)
    return {kExitSkipped, "", "flotilla-kernel " + std::string(family.name()) + ": skipped: " + result.message + "\n"};
  const bool ok = result.outcome == Outcome::ok;
  if (result.quiet) return {ok ? kExitOk : kExitFailed, "", ""};
  return {ok ? kExitOk : kExitFailed,
          "verify " + describe(family, params) + "\n" + (ok ? "PASS " : "FAIL ") + result.message + "\n" +
              format_metrics({{"max_abs_error", result.max_abs_error}}) + "\n",
          ""};
}

}  // namespace

std::string option_name(const std::string& param) {
  std::string name = param;
  for (char& c : name) c = c == '_' ? '-' : c;
  return name;
}

RunReport run_variant(const RunRequest& request) {
  const KernelFamily* family = find_family(request.family);
  if (!family)
    return {kExitUsage, "",
            "flotilla-kernel: unknown kernel family '" + request.family + "' (try 'flotilla-kernel list')\n"};
  try {
    // Defaults filled in, as the executable's option parser does: the first line names them all.
    const Params params = resolve_params(*family, request.params);
    if (request.verify) return verify(*family, params, request.shard, request.shards);
    return benchmark(*family, params);
  } catch (const InvalidParameter& e) {
    return {kExitUsage, "", "flotilla-kernel: option --" + option_name(e.parameter()) + ": " + e.what() + "\n"};
  } catch (const std::exception& e) {
    return {kExitFailed, "", std::string("flotilla-kernel: error: ") + e.what() + "\n"};
  }
}

}  // namespace flotilla::kernels
