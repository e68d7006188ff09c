// ReplayCommand.cpp — `flotilla replay SPACE.csv|CACHE.json[.gz] [options]`: runs a search
// strategy against a recorded tuning space instead of hardware (search/Replay.h) and reports
// how close it gets to the known optimum, as text or one JSON object. Deterministic for a seed.
#include <iostream>

#include <boost/program_options.hpp>

#include "Commands.h"
#include "flotilla/search/Replay.h"
#include "flotilla/search/Strategy.h"

namespace po = boost::program_options;

namespace flotilla::cli {

po::options_description replay_options() {
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")(
      "strategy", po::value<std::string>()->default_value("bayes"), "search strategy")(
      "budget", po::value<std::size_t>()->default_value(100), "evaluations per repeat")(
      "repeats", po::value<std::size_t>()->default_value(20), "independent repeats")(
      "seed", po::value<std::uint64_t>()->default_value(1), "seed of the first repeat's seed")(
      "batch", po::value<std::size_t>()->default_value(1), "configurations asked at a time")(
      "objective", po::value<std::string>()->default_value(""),
      "objective column or cache field (default: time, else the last CSV column)")(
      "maximize", "the objective is to be maximised (default: minimised)")(
      "json", "print one JSON object instead of text");
  return desc;
}

int replay_command(const std::vector<std::string>& args) {
  const auto desc = replay_options();
  po::options_description hidden;
  hidden.add_options()("file", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("file", 1);
  po::options_description all;
  all.add(desc).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {  // the dispatcher answers --help first; this is for a direct call
    std::cout << command_help(*find_command("replay"));
    return 0;
  }
  if (!vm.count("file")) {
    std::cerr << short_usage(*find_command("replay"));
    return 1;
  }
  auto recorded = search::load_recorded_space(
      vm["file"].as<std::string>(), {.objective = vm["objective"].as<std::string>(), .maximize = vm.count("maximize") > 0});
  search::ReplayOptions options{.strategy = vm["strategy"].as<std::string>(), .budget = vm["budget"].as<std::size_t>(),
                                .repeats = vm["repeats"].as<std::size_t>(), .seed = vm["seed"].as<std::uint64_t>(),
                                .batch = vm["batch"].as<std::size_t>()};
  if (options.budget == 0 || options.repeats == 0 || options.batch == 0)
    throw std::invalid_argument("--budget, --repeats and --batch must be positive");
  search::make_strategy({.name = options.strategy}, recorded.space());  // an unknown name fails here, listing the known ones
  auto result = search::replay(recorded, options);
  std::cout << (vm.count("json") ? search::replay_json(recorded, result) + "\n" : search::replay_text(recorded, result));
  return 0;
}

}  // namespace flotilla::cli
