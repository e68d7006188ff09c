// Objectives.h — several objectives in one campaign (intent.objectives, docs/objectives.md), and
// the rule that picks one winner from their Pareto front (intent.pick). Pure functions: the
// campaign's settings, the results file's reader and `flotilla results summary` share them.
//
// Rules:
//  - An objective is METRIC:min or METRIC:max (also :minimize, :maximize); a list is separated by
//    commas, with blanks allowed around each; no metric twice. Its canonical text is
//    "time_s:min,residual:min".
//  - A pick rule chooses one member of a front, each member holding one value per goal:
//      knee           the member closest to the ideal point (every objective's best value on the
//                     front) once each objective is scaled to [0, 1] over the front (0 = best), so
//                     no objective's unit or range decides; ties go to the earlier member;
//      weighted W,... the member with the least weighted sum of those scaled values (one weight
//                     per objective, none negative, not all zero);
//      lexicographic  the best by the first objective, ties by the second, and so on.
//  - An objective whose values are all equal on the front scales to 0 for every member.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::results {

// One goal of an analysis or a campaign: a metric and whether higher is better.
struct Goal {
  std::string metric;
  bool maximize = true;
  std::string text() const { return metric + (maximize ? ":max" : ":min"); }
};

// What a metric may be called in a task's output: [A-Za-z_][A-Za-z0-9_.]*, at most 63 bytes.
bool is_metric_name(std::string_view name);

// Empty when `text` is a valid objectives list, else what is wrong with it.
std::string objectives_problem(std::string_view text);
// The goals of a valid list (objectives_problem(text) is empty); throws std::invalid_argument otherwise.
std::vector<Goal> parse_objectives(std::string_view text);
// "time_s:min,residual:min".
std::string objectives_text(const std::vector<Goal>& goals);

struct PickRule {
  enum class Kind { knee, weighted, lexicographic } kind = Kind::knee;
  std::vector<double> weights;  // weighted: one per goal
  std::string text() const;     // canonical: "knee", "weighted 0.7,0.3", "lexicographic"
};

// Empty when `text` is a valid rule for `goals` objectives, else what is wrong with it.
std::string pick_problem(std::string_view text, std::size_t goals);
// The rule of a valid text; throws std::invalid_argument otherwise.
PickRule parse_pick(std::string_view text, std::size_t goals);

// Index into `members` (each one value per goal) of the member the rule picks; members must not
// be empty.
std::size_t pick_member(const std::vector<std::vector<double>>& members, const std::vector<Goal>& goals,
                        const PickRule& rule);

}  // namespace flotilla::results
