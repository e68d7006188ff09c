// Stop.h — a campaign stopped before its end, as a value: by a signal (SIGINT/SIGTERM: run
// again to resume), by `flotilla cancel` (a stop request file), or by a backend in hold mode that
// wrote a job instead of submitting it (`flotilla sbatch`: a person submits it). Each step of a
// round returns one when it stopped, and the round returns it to the loop, which reports it.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <system_error>

namespace flotilla::scheduler {

enum class Stop { interrupted, cancelled, held };

// Empty while the campaign goes on.
using Halt = std::optional<Stop>;

// Where a stop comes from: the signal handlers' flag and the stop request file.
class StopSignals {
 public:
  StopSignals(const std::atomic<bool>& signalled, std::filesystem::path request)
      : m_signalled(signalled), m_request(std::move(request)) {}
  bool signalled() const { return m_signalled; }
  bool requested() const {
    std::error_code ec;
    return std::filesystem::exists(m_request, ec);
  }
  bool any() const { return signalled() || requested(); }
  // The stop being obeyed: a signal wins over a request.
  Stop kind() const { return signalled() ? Stop::interrupted : Stop::cancelled; }

 private:
  const std::atomic<bool>& m_signalled;
  std::filesystem::path m_request;
};

}  // namespace flotilla::scheduler
