// Families.h — internal: one accessor per kernel family, for the explicit list in Family.cpp.
#pragma once

#include "flotilla/kernels/Family.h"

namespace flotilla::kernels {

const KernelFamily& stencil_family();  // StencilFamily.cpp
const KernelFamily& sleep_family();    // SleepFamily.cpp

}  // namespace flotilla::kernels
