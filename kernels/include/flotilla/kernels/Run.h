// Run.h — one variant run exactly as the flotilla-kernel executable runs it: its exit status and
// the text it prints, so that a variant run in-process (the MPI worker) gives the same trial
// result as the same variant run as a process (the local backend).
//
// Exit statuses: 0 measured / verified, 1 verification or run failed, 2 bad parameters (the
// message names the option), 77 skipped (no usable GPU). The text ends with the one metrics line
// of flotilla's protocol when there is one. Never throws for these expected failures.
// Kokkos families need a live Runtime (Runtime.h) around the call.
#pragma once

#include <string>

#include "flotilla/kernels/Family.h"

namespace flotilla::kernels {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSkipped = 77;  // CTest's SKIP_RETURN_CODE convention

struct RunRequest {
  std::string family;
  Params params;  // missing ones take their defaults
  bool verify = false;
  int shard = 0;
  int shards = 1;
};

struct RunReport {
  int exit_code = kExitOk;
  std::string out;  // what flotilla-kernel prints on stdout
  std::string err;  // ... and on stderr
};

RunReport run_variant(const RunRequest& request);

// "tile_x" -> "tile-x": a parameter's command-line option name.
std::string option_name(const std::string& param);

}  // namespace flotilla::kernels
