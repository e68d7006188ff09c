// DecodeStages.cpp — the decode engine's profile components (DecodeStages.h).
#include "flotilla/kernels/DecodeStages.h"

namespace flotilla::kernels {

const std::vector<DecodeComponent>& decode_components() {
  static const std::vector<DecodeComponent> list = {
      {"norm", "share_norm", {"norm", "norm_vec"}},
      {"gemv", "share_gemv", {"gemv_unroll", "gemv_rows", "gemv_split_k", "weights", "drafter", "k"}},
      {"attention", "share_attention", {"attn_splits", "attn_unroll"}},
      {"draft", "share_draft", {"drafter", "k", "ngram", "draft_layers"}},
      {"other", "share_other", {}},
  };
  return list;
}

}  // namespace flotilla::kernels
