// main.cpp — the `flotilla` command line: subcommands run and results.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Campaign.h"
#include "flotilla/scheduler/Settings.h"

namespace po = boost::program_options;
using namespace flotilla;

namespace {

constexpr const char* kUsage = R"(flotilla — turns an intent into a verified result

usage:
  flotilla run CAMPAIGN.ini [--section.key=VALUE ...]   run or resume a campaign
  flotilla results summary FILE.h5 [--json] [--top K]   summarise a campaign's results
  flotilla --version
  flotilla COMMAND --help                               options of a command

exit codes: 0 done, 1 bad input or setup, 3 nothing verified, 130 interrupted (resumable)
)";

std::filesystem::path self_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

void on_signal(int) { scheduler::request_stop(); }

int run_command(const std::vector<std::string>& args) {
  po::options_description general("flotilla run CAMPAIGN.ini [options]");
  general.add_options()("help,h", "show this help")("no-live", "print progress as plain lines, even on a terminal");
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << general << '\n' << scheduler::campaign_options() << '\n';
    return args.empty() ? 1 : 0;
  }
  std::vector<std::string> overrides;
  bool live = isatty(STDERR_FILENO);
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--no-live") live = false;
    else if (args[i] == "--help" || args[i] == "-h") return run_command({"--help"});
    else overrides.push_back(args[i]);
  }
  auto settings = scheduler::load_settings(args[0], overrides);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return scheduler::run_campaign(settings, {.path_prepend = {self_dir()}, .live_progress = live}, std::cout, std::cerr);
}

int results_command(const std::vector<std::string>& args) {
  po::options_description desc("flotilla results summary FILE.h5 [options]");
  desc.add_options()("help,h", "show this help")("json", "print one JSON object instead of text")(
      "top", po::value<std::size_t>()->default_value(5), "rows in the top table");
  po::options_description hidden;
  hidden.add_options()("what", po::value<std::string>())("file", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("what", 1).add("file", 1);
  po::options_description all;
  all.add(desc).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << '\n';
    return 0;
  }
  if (!vm.count("what") || vm["what"].as<std::string>() != "summary" || !vm.count("file")) {
    std::cerr << "usage: flotilla results summary FILE.h5 [--json] [--top K]\n";
    return 1;
  }
  auto store = results::Store::open_read(vm["file"].as<std::string>());
  auto summary = results::summarize(store);
  auto top = vm["top"].as<std::size_t>();
  std::cout << (vm.count("json") ? results::summary_json(summary, top) + "\n" : results::summary_text(summary, top));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "flotilla " << FLOTILLA_VERSION << '\n';
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "run") return run_command(args);
    if (command == "results") return results_command(args);
    std::cerr << fmt::format("flotilla: unknown command '{}'\n\n{}", command, kUsage);
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "flotilla " << command << ": " << e.what() << '\n';
    return 1;
  }
}
