// DecodeStages.h — the components of the decode engine's bottleneck profile, for the staged
// decode intent ("maximize decode tokens/s, outputs unchanged"): each component's share metric
// (what the decode family reports) and the family's parameters that tune it. Data only: the
// rules that pick the next stage and decide when to stop are the scheduler's, one set for every
// staged campaign (flotilla/scheduler/Stages.h, next_stage), which `bench/kernels` and
// configs/decode.ini ([intent] component = NAME: SHARE_METRIC: PARAMS) apply to this table.
#pragma once

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

}  // namespace flotilla::kernels
