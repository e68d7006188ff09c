// Runtime.cpp — Kokkos::ScopeGuard behind a pimpl, so callers need no Kokkos headers.
#include "flotilla/kernels/Runtime.h"

#include <Kokkos_Core.hpp>

namespace flotilla::kernels {

struct Runtime::Impl {
  // ScopeGuard initialises only if nobody has, and finalises only what it initialised.
  Kokkos::ScopeGuard m_guard;
  explicit Impl(const Kokkos::InitArguments& args) : m_guard(args) {}
};

namespace {
Kokkos::InitArguments quiet_arguments() {
  Kokkos::InitArguments args;
  args.disable_warnings = true;  // the worker's stdout carries the metrics protocol
  return args;
}
}  // namespace

Runtime::Runtime() : m_impl(std::make_unique<Impl>(quiet_arguments())) {}
Runtime::~Runtime() = default;

bool Runtime::active() { return Kokkos::is_initialized(); }

}  // namespace flotilla::kernels
