// Families.h — internal: one accessor per kernel family, for the explicit list in Family.cpp.
#pragma once

#include "flotilla/kernels/Family.h"

namespace flotilla::kernels {

const KernelFamily& stencil_family();  // StencilFamily.cpp
const KernelFamily& sleep_family();    // SleepFamily.cpp
const KernelFamily& rmsnorm_family();    // DecodeFamilies.cpp
const KernelFamily& gemv_family();       // DecodeFamilies.cpp
const KernelFamily& attention_family();  // DecodeFamilies.cpp
const KernelFamily& decode_family();     // DecodeFamily.cpp
const KernelFamily& allreduce_norm_family();  // AllreduceFamily.cpp
const KernelFamily& h2d_metadata_family();    // MetadataFamily.cpp

}  // namespace flotilla::kernels
