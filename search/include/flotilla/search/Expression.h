// Expression.h — the rules every muparser expression a campaign file gives obeys (constraints,
// evaluate.pass_when): an expression reads values, it never assigns them.
//
// muparser accepts `a = 3` as an assignment when `a` is a variable: `pass_when = errors = 3`
// overwrote the checker's count and verified a candidate with 7 errors, and `constraint = x = 3`
// held for every candidate. A single '=' outside the comparisons ==, <=, >= and != is refused
// before the expression is compiled.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace flotilla::search {

// The position of the first assignment ('=' that is not part of ==, <=, >= or !=), if any.
inline std::optional<std::size_t> assignment_position(std::string_view expression) {
  for (std::size_t i = 0; i < expression.size(); ++i) {
    if (expression[i] != '=') continue;
    const char before = i > 0 ? expression[i - 1] : '\0';
    const char after = i + 1 < expression.size() ? expression[i + 1] : '\0';
    if (after == '=') {
      ++i;  // "==": skip both
      continue;
    }
    if (before == '<' || before == '>' || before == '!') continue;
    return i;
  }
  return std::nullopt;
}

}  // namespace flotilla::search
