// DecodeStages.h — the pure decisions of the staged decode intent ("maximize decode tokens/s,
// outputs unchanged"): which engine component to tune next, from the bottleneck profile, and when
// to stop. No I/O and no Kokkos; the caller measures, verifies and keeps the records.
//
// Rules (each stage explores only the parameters of one component):
// 1. Stop when the last stage gained less than `threshold` (gain = new / old - 1).
// 2. Otherwise take the component with the largest share of decode time that has parameters
//    and has not been tuned yet.
// 3. Stop when even removing that component entirely could not gain `threshold`
//    (Amdahl: 1 / (1 - share) - 1 < threshold), or when every tunable component is tuned.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace flotilla::kernels {

struct DecodeComponent {
  std::string name;                 // norm, gemv, attention, draft, other
  std::string share_metric;         // the decode family's metric: share_gemv, ...
  std::vector<std::string> params;  // the decode family's parameters that tune it (empty: none)
};
// In profile order. gemv's parameters include the speculative drafter: speculation cuts the
// number of weight passes per token, which is what the gemv share measures.
const std::vector<DecodeComponent>& decode_components();

struct StageRecord {
  std::string component;
  double before = 0;  // incumbent tokens/s when the stage started
  double after = 0;   // incumbent tokens/s when it ended (== before when nothing was accepted)
};

struct StageDecision {
  bool stop = false;
  std::string component;  // the next stage's component, when !stop
  std::string reason;     // one line, for the report
};

// `shares`: the incumbent's profile, share_metric -> share of decode time.
StageDecision next_stage(const std::map<std::string, double>& shares, const std::vector<StageRecord>& history,
                         double threshold);

}  // namespace flotilla::kernels
