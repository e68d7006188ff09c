// ResultsCommand.cpp — `flotilla results SUBCOMMAND FILE.h5 ... [options]`: offline analysis of
// campaign files. This file only dispatches: each subcommand lives in src/results/, and this is
// the one list of them; usage, --help, the man pages and the completions are generated from it.
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "Commands.h"
#include "flotilla/results/Printable.h"
#include "results/ResultsCli.h"

namespace flotilla::cli {
namespace {

using results_cli::Subcommand;
namespace po = boost::program_options;

const Subcommand* const kSubcommands[] = {
    &results_cli::kSummary, &results_cli::kHistory, &results_cli::kTop,    &results_cli::kCompare,
    &results_cli::kPareto,  &results_cli::kParams,  &results_cli::kExport, &results_cli::kPlot,
    &results_cli::kTests,   &results_cli::kProposals, &results_cli::kReport,
};

std::string usage() {
  std::string out = "usage: flotilla results SUBCOMMAND FILE.h5 ... [options]\n\nsubcommands:\n";
  for (const auto* s : kSubcommands) out += fmt::format("  {:<8} {}\n  {:<8} {}\n", s->name, s->synopsis, "", s->what);
  out += "\nevery subcommand takes --json (one JSON object for scripts) and --help\n";
  return out;
}

po::options_description options_of(const Subcommand& s) {
  po::options_description desc(fmt::format("flotilla results {} {}\n{}\n\noptions", s.name, s.synopsis, s.what));
  desc.add_options()("help,h", "show this help")("json", "print one JSON object instead of text");
  if (s.add_options) s.add_options(desc);
  return desc;
}

}  // namespace

std::vector<ResultsSubcommandInfo> results_subcommands() {
  std::vector<ResultsSubcommandInfo> out;
  for (const auto* s : kSubcommands) out.push_back({s->name, s->synopsis, s->what, options_of(*s)});
  return out;
}

int results_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << usage();
    return args.empty() ? 1 : 0;
  }
  const Subcommand* chosen = nullptr;
  for (const auto* s : kSubcommands)
    if (s->name == args[0]) chosen = s;
  if (!chosen) {
    std::cerr << fmt::format("flotilla results: unknown subcommand '{}'\n\n{}", args[0], usage());
    return 1;
  }
  auto desc = options_of(*chosen);
  po::options_description hidden;
  hidden.add_options()("file", po::value<std::vector<std::string>>()->default_value({}, ""));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add("file", -1);
  po::variables_map vm;
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  po::store(po::command_line_parser(rest).options(all).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << '\n';
    return 0;
  }
  const auto& files = vm["file"].as<std::vector<std::string>>();
  if (files.size() < chosen->min_files || (chosen->max_files && files.size() > chosen->max_files)) {
    std::cerr << fmt::format("usage: flotilla results {} {}\n", chosen->name, chosen->synopsis);
    return 1;
  }
  if (vm.count("json") || chosen->prints_data) return chosen->run(vm, files, std::cout);
  // Text is for people, and quotes task output and names from a file anyone may have written: a
  // control byte in it must not reach the terminal (Printable.h).
  std::ostringstream text;
  const int status = chosen->run(vm, files, text);
  std::cout << results::printable(text.str());
  return status;
}

}  // namespace flotilla::cli
