// Clock.h — the wall-clock time the results file records (seconds since the epoch).
#pragma once

#include <chrono>

namespace flotilla::scheduler {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace flotilla::scheduler
