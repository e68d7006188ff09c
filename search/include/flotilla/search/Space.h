// Space.h — the parameter space of a campaign: typed parameters plus constraint expressions.
//
// A Configuration holds one double per parameter, in declaration order: the value itself for int
// and real parameters, the choice index for enum and ordinal ones. Its canonical text
// ("tile_x=32 precision=double") is the candidate's identity everywhere (HDF5, resume, dedup).
// Invariants: a Space never yields a configuration that violates a constraint; constraint
// expressions are compiled once (muparser) and evaluated against variables bound to the
// parameter values, with each enum/ordinal choice name defined as a constant (its index) when
// that name is unambiguous. A constraint may also be code (add_predicate), e.g. "is a row of
// this recorded table" for replay. The feasible grid points of a finite space are enumerated
// at most once and kept (feasible_indices), for the strategies that sample or score them all.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::search {

// Messages are the part after "file:line: [space] ", e.g.
//   "param 'tile_x': '8..x' is not an integer range".
class SpaceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ParamKind { integer, real, enumeration, ordinal };

struct Parameter {
  // An integer range "lo..hi [step s]" of more than kListedRange values, kept as its first
  // value, step and count instead of listed: listed, 1..9999999 took 80 MB per parameter and a
  // scan per lookup. Shorter ranges are listed in `values`, as before.
  struct IntRange {
    long long first = 0, step = 1;
    std::size_t count = 0;
    long long last() const { return first + static_cast<long long>(count - 1) * step; }
  };
  static constexpr std::size_t kListedRange = 4096;

  std::string name;
  ParamKind kind = ParamKind::integer;
  std::vector<double> values;       // integer: allowed values in order given (empty when `range` holds them)
  std::optional<IntRange> range;    // integer: a long range, in place of `values`
  std::vector<std::string> labels;  // enumeration/ordinal: choices in order given
  // enumeration/ordinal written `NAME=VALUE`: what each choice puts into commands (its label is
  // what reports, the space and the search see). Empty when no choice has a value; otherwise as
  // long as `labels`, a choice without '=' standing for itself.
  std::vector<std::string> choice_values;
  double lo = 0, hi = 0;            // real: bounds
  bool log_scale = false;           // real: sample and grid on a log scale
  int grid_points = 5;              // real: points per axis for grid enumeration

  // Number of grid values: the list or range size, or grid_points for real parameters.
  std::size_t grid_size() const;
  // The i-th grid value.
  double grid_value(std::size_t i) const;
  // Integer, enumeration and ordinal parameters: the grid index of a value (a choice's index
  // for the latter), nullopt when it is not one; in constant time for a range. Real: nullopt.
  std::optional<std::size_t> index_of(double value) const;
  bool continuous() const { return kind == ParamKind::real; }
  std::string format(double value) const;
  // Parses a value written as in canonical text; nullopt if not allowed.
  std::optional<double> parse(std::string_view text) const;
};

// Parses "name: kind: spec", e.g. "tile_x: int: 8,16,32", "n: int: 64..4096 pow2",
// "k: int: 0..100 step 10", "lr: real: 1e-4..1e-1 log points 7", "prec: enum: double,float",
// "size: ordinal: small,medium,large", "db: enum: memory=:memory:, file={tmpdir}/test.db" (a
// choice's value runs up to the next ','; it may hold the command's placeholders).
Parameter parse_parameter(std::string_view spec);

using Configuration = std::vector<double>;

class Space {
 public:
  Space();
  Space(Space&&) noexcept;
  Space& operator=(Space&&) noexcept;
  ~Space();

  // Throws SpaceError for a duplicate name; parameters must all be added before constraints.
  void add_parameter(Parameter parameter);
  // Compiles the expression; throws SpaceError naming an unknown name or a syntax error.
  void add_constraint(std::string expression);
  // A constraint given as code (e.g. "is a row of this recorded table"); `description` stands
  // for it in constraints() and the fingerprint.
  void add_predicate(std::string description, std::function<bool(const Configuration&)> predicate);

  const std::vector<Parameter>& parameters() const { return m_parameters; }
  const std::vector<std::string>& constraints() const { return m_constraints; }

  bool feasible(const Configuration& config) const;
  // Product of grid sizes; saturates at UINT64_MAX.
  std::uint64_t grid_size() const;
  // Mixed-radix decoding of a grid index (last parameter varies fastest).
  Configuration grid_point(std::uint64_t index) const;
  // Calls visit(index) for every feasible grid point, in order.
  void for_each_feasible(const std::function<void(std::uint64_t)>& visit) const;
  // The grid indices of every feasible point, in order, computed once and kept; nullptr when
  // the space has a real parameter or more than kEnumerateLimit grid points (strategies then
  // sample instead of enumerating).
  static constexpr std::uint64_t kEnumerateLimit = std::uint64_t{1} << 24;
  const std::vector<std::uint64_t>* feasible_indices() const;
  // On a space not enumerated, a strategy that samples or walks it gives up a proposal after
  // this many configurations in a row that were infeasible or seen, and takes the space as
  // used up: a constraint that holds almost nowhere must end a search, not hang it.
  static constexpr int kMaxRejections = 100'000;

  std::string to_text(const Configuration& config) const;
  // Parses "a=1 b=float" (every parameter once, any order). Throws SpaceError.
  Configuration parse_configuration(std::string_view text) const;
  // A stable text of the parameters and constraints, for detecting a changed space on resume.
  std::string fingerprint() const;

 private:
  struct Constraints;
  std::vector<Parameter> m_parameters;
  std::vector<std::string> m_constraints;
  std::unique_ptr<Constraints> m_compiled;
  std::vector<std::function<bool(const Configuration&)>> m_predicates;
  // Cache of feasible_indices(); cleared whenever the space changes.
  mutable std::shared_ptr<const std::vector<std::uint64_t>> m_feasible;
  mutable bool m_feasible_known = false;
};

}  // namespace flotilla::search
