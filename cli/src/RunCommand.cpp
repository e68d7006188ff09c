// RunCommand.cpp — `flotilla run CAMPAIGN.ini [--section.key=VALUE ...]`.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "Commands.h"
#include "flotilla/jobs/Programs.h"
#include "flotilla/results/Printable.h"
#include "flotilla/scheduler/Campaign.h"
#include "flotilla/scheduler/Settings.h"

namespace po = boost::program_options;

namespace flotilla::cli {
namespace {

void on_signal(int) { scheduler::request_stop(); }

}  // namespace

po::options_description run_options() {
  po::options_description general("options");
  general.add_options()("help,h", "show this help")(
      "no-live", "print one plain progress line per round, even on a terminal")(
      "cancel-on-interrupt",
      "on Ctrl-C or SIGTERM, cancel the campaign's Slurm jobs (by default they keep running, and the next run "
      "takes them up again)");
  return general;
}

// --help and a missing CAMPAIGN.ini are answered by the dispatcher (main.cpp) from the table.
int run_command(const std::vector<std::string>& args) {
  if (args.empty()) throw std::invalid_argument("usage: flotilla run CAMPAIGN.ini [--section.key=VALUE ...]");
  std::vector<std::string> overrides;
  bool live = isatty(STDERR_FILENO);
  bool cancel_on_interrupt = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--no-live") live = false;
    else if (args[i] == "--cancel-on-interrupt") cancel_on_interrupt = true;
    else overrides.push_back(args[i]);
  }
  auto settings = scheduler::load_settings(args[0], overrides);
  for (const auto& warning : settings.warnings) std::cerr << "warning: " << results::printable(warning) << '\n';
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const scheduler::RunOptions options{.path_prepend = {jobs::install_dir()}, .live_progress = live,
                                      .cancel_on_interrupt = cancel_on_interrupt};
  if (settings.staged)
    return scheduler::run_staged_campaign([&] { return scheduler::load_settings(args[0], overrides); }, options,
                                          std::cout, std::cerr);
  return scheduler::run_campaign(settings, options, std::cout, std::cerr);
}

}  // namespace flotilla::cli
