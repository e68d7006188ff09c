// ResultsCommand.cpp — `flotilla results SUBCOMMAND FILE.h5 ...`: offline analysis of campaign files.
#include <iostream>

#include <boost/program_options.hpp>

#include "Commands.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/results/Store.h"

namespace po = boost::program_options;

namespace flotilla::cli {

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

}  // namespace flotilla::cli
