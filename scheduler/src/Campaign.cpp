// Campaign.cpp — run_campaign and the stop requests (Campaign.h); the loop itself is
// campaign/Runner.h and its parts.
#include "flotilla/scheduler/Campaign.h"

#include <atomic>

#include "campaign/Runner.h"

namespace flotilla::scheduler {
namespace {
std::atomic<bool> g_stop{false};  // set by the signal handlers (request_stop)
}

void request_stop() { g_stop = true; }

std::filesystem::path stop_request_path(const Settings& settings) { return settings.results.string() + ".stop"; }

int run_campaign(const Settings& settings, const RunOptions& options, std::ostream& out, std::ostream& err) {
  g_stop = false;
  const StopSignals stops(g_stop, stop_request_path(settings));
  return CampaignRunner(settings, options, out, err, stops).run();
}

}  // namespace flotilla::scheduler
