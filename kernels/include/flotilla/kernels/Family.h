// Family.h — the kernel-family registry: the real workloads flotilla tunes, callable in-process.
//
// A KernelFamily declares its parameters (name, default, allowed values), benchmarks one variant
// (a full set of parameter values) and verifies it against a plain reference. The MPI worker and
// the flotilla-kernel executable call these directly, so they never print and never exit:
// expected failures (a variant that fails verification, a missing GPU) come back as values;
// only bad parameters throw (InvalidParameter, naming the parameter).
// Families are listed explicitly in Family.cpp; there is no static-initialiser self-registration.
// Kokkos-based families need a live flotilla::kernels::Runtime (Runtime.h) while they run.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flotilla::kernels {

// One declared parameter. A value is valid when it is one of `choices` (if non-empty), else a
// decimal integer in [min_value, max_value]. The CLI spells `tile_x` as `--tile-x`.
struct ParamDecl {
  std::string name;
  std::string description;
  std::string default_value;
  std::vector<std::string> choices;
  std::int64_t min_value = 0;
  std::int64_t max_value = 0;

  // "one of 1, 2, 4" or "integer in [1, 1024]", for help texts.
  std::string allowed_text() const;
};

// Parameter values by name, as text (they arrive from the command line or a campaign file).
using Params = std::map<std::string, std::string>;

// Thrown for an unknown, malformed or out-of-range parameter; what() names it.
class InvalidParameter : public std::invalid_argument {
 public:
  InvalidParameter(std::string parameter, const std::string& message)
      : std::invalid_argument(message), m_parameter(std::move(parameter)) {}
  const std::string& parameter() const { return m_parameter; }

 private:
  std::string m_parameter;
};

struct Metric {
  std::string name;  // protocol name: [A-Za-z_][A-Za-z0-9_.]*
  double value = 0;
};
using Metrics = std::vector<Metric>;

// ok: measured / verified. failed: ran and went wrong (a wrong result, a CUDA launch error).
// skipped: could not run here (no usable GPU, built without CUDA); the message says why.
enum class Outcome { ok, failed, skipped };

struct BenchmarkResult {
  Outcome outcome = Outcome::ok;
  std::string message;  // empty when ok
  Metrics metrics;      // in a stable order; empty unless ok
  bool quiet = false;   // a non-root rank of a multi-rank (MPI) family: the command prints nothing
};

struct VerifyResult {
  Outcome outcome = Outcome::ok;
  std::string message;       // always set, e.g. "shard 2/4 rows 128..191: max abs error 0 <= ..."
  double max_abs_error = 0;  // over this shard's rows
  double tolerance = 0;
  bool quiet = false;  // as in BenchmarkResult
};

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;  // one line
  virtual const std::vector<ParamDecl>& params() const = 0;

  // Runs the variant and measures it. Missing parameters take their defaults.
  [[nodiscard]] virtual BenchmarkResult benchmark(const Params& params) const = 0;
  // Checks the variant's output against the reference on shard `shard` of `shards` (0-based).
  [[nodiscard]] virtual VerifyResult verify(const Params& params, int shard, int shards) const = 0;
};

// Every family, in a fixed order; the list lives in Family.cpp.
const std::vector<const KernelFamily*>& families();
// nullptr when no family has that name.
const KernelFamily* find_family(std::string_view name);

// Fills in defaults and checks every value against its declaration; unknown names are errors.
// Messages: "unknown parameter 'tilex' for kernel family 'stencil'",
//           "parameter 'tile_x' must be an integer in [1, 1024], got '0'",
//           "parameter 'unroll' must be one of 1, 2, 4, got '3'".
Params resolve_params(const KernelFamily& family, const Params& given);
// The integer value of a resolved parameter (resolve_params has checked it parses).
std::int64_t int_param(const Params& resolved, const std::string& name);

}  // namespace flotilla::kernels
