// Runtime.h — the Kokkos lifetime the kernel families need, without Kokkos in public headers.
//
// Create one Runtime before the first benchmark/verify and keep it until the last: Kokkos may be
// initialised and finalised only once per process. If Kokkos is already initialised (a host
// program owns it), a Runtime leaves it alone and does not finalise it.
#pragma once

#include <memory>

namespace flotilla::kernels {

class Runtime {
 public:
  Runtime();
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Whether Kokkos is usable now (some Runtime, or the host program, initialised it).
  static bool active();

 private:
  struct Impl;  // holds a Kokkos::ScopeGuard
  std::unique_ptr<Impl> m_impl;
};

}  // namespace flotilla::kernels
