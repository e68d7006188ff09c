// Stages.h — the pure decisions of a staged, bottleneck-driven campaign ([intent] stages =
// bottleneck): which component to tune next, from the incumbent's profile, and when to stop.
// No I/O; the stage runner (StagedRun.cpp) measures, verifies and keeps the records.
//
// The components come from the campaign file ([intent] component = NAME: SHARE_METRIC: PARAMS),
// so nothing here knows a kernel. Rules (kernels' DecodeStages.h, made general):
// 1. Stop when the last stage gained less than `threshold`.
// 2. Otherwise take the component with the largest share (its share metric in the profile) among
//    those that have parameters (or any, when a proposer changes the code) and have not had a
//    stage yet.
// 3. Stop when even removing that component entirely could not gain `threshold`
//    (Amdahl: 1 / (1 - share) - 1 < threshold), or when every tunable component has had its stage.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace flotilla::scheduler {

struct Component {
  std::string name;                 // e.g. gemv
  std::string share_metric;         // a metric of the explore command: its share of the objective's time
  std::vector<std::string> params;  // the [space] parameters that tune it (empty: none)
};

struct StageRecord {
  std::string component;
  double gain = 0;  // stage_gain of the stage (0 when the incumbent was kept)
};

struct StageDecision {
  bool stop = false;
  std::string component;  // the next stage's component, when !stop
  double share = 0;       // its share, when !stop
  std::string reason;     // one line, for the report
};

// Relative improvement from `before` to `after`: after/before - 1 when maximizing, before/after - 1
// when minimizing; 0 when either is not positive.
double stage_gain(double before, double after, bool maximize);

// `shares`: the incumbent's profile, share metric -> share of the time (metrics not named by a
// component are ignored).
// `code_changes`: a proposer writes the stages' candidates ([propose], docs/propose.md), so a
// component without parameters is tunable too (its code is what changes).
StageDecision next_stage(const std::vector<Component>& components, const std::map<std::string, double>& shares,
                         const std::vector<StageRecord>& history, double threshold, bool code_changes = false);

// "12.3%"
std::string percent(double fraction);

}  // namespace flotilla::scheduler
