// ReplayCommand.cpp — `flotilla replay SPACE.csv|CACHE.json[.gz] [options]`: runs a search
// strategy against a recorded tuning space instead of hardware (search/Replay.h) and reports
// how close it gets to the known optimum, as text or one JSON object. Deterministic for a seed.
// With --warm-start OTHER, every repeat runs twice from the same seed, cold and warm-started with
// OTHER's outcomes (another recorded space of the same kernel), and the report sets the two side
// by side: the gain, or the cost of a warm start that misleads.
#include <iostream>
#include <optional>
#include <stdexcept>
#include <utility>

#include <boost/program_options.hpp>

#include "Commands.h"
#include "flotilla/results/Printable.h"
#include "flotilla/search/Replay.h"
#include "flotilla/search/Strategy.h"

namespace po = boost::program_options;

namespace flotilla::cli {
namespace {
// "a=b,c=d" -> {(a, b), (c, d)}; `option` and `form` ("NAME=VALUE") are for errors.
std::vector<std::pair<std::string, std::string>> pairs_of(const std::string& text, const std::string& option,
                                                          const std::string& form) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const auto item = text.substr(start, end - start);
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument("--" + option + ": '" + item + "' is not " + form);
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    start = end + 1;
  }
  return out;
}
}  // namespace

po::options_description replay_options() {
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")(
      "strategy", po::value<std::string>()->default_value("bayes-genetic"), "search strategy")(
      "budget", po::value<std::size_t>()->default_value(100), "evaluations per repeat")(
      "repeats", po::value<std::size_t>()->default_value(20), "independent repeats")(
      "seed", po::value<std::uint64_t>()->default_value(1), "seed of the first repeat's seed")(
      "batch", po::value<std::size_t>()->default_value(1), "configurations asked at a time")(
      "objective", po::value<std::string>()->default_value(""),
      "objective column or cache field (default: time, else the last CSV column)")(
      "maximize", "the objective is to be maximised (default: minimised)")(
      "json", "print one JSON object instead of text")(
      "warm-start", po::value<std::string>(),
      "another recorded space of the same kernel (CSV or cache, e.g. another GPU's) whose outcomes warm-start every repeat; "
      "the report gives the cold and the warm statistics side by side, same seeds")(
      "warm-start-map", po::value<std::string>()->default_value(""),
      "PARAM=OTHER,...: this space's PARAM is the warm-start file's OTHER (names equal but for case match by themselves)")(
      "warm-start-fix", po::value<std::string>()->default_value(""),
      "NAME=VALUE,...: a parameter on one side only, pinned: the warm-start file's (only its rows with VALUE are read) or "
      "this space's (the file's rows are read as having VALUE)");
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
  if (!vm.count("warm-start") && (!vm["warm-start-map"].as<std::string>().empty() || !vm["warm-start-fix"].as<std::string>().empty()))
    throw std::invalid_argument("--warm-start-map and --warm-start-fix need --warm-start");
  std::optional<search::WarmStartData> warm_data;
  if (vm.count("warm-start")) {
    auto other = search::load_recorded_space(
        vm["warm-start"].as<std::string>(), {.objective = vm["objective"].as<std::string>(), .maximize = vm.count("maximize") > 0});
    warm_data = search::warm_start_from(recorded, other,
                                        {.map = pairs_of(vm["warm-start-map"].as<std::string>(), "warm-start-map", "PARAM=OTHER"),
                                         .fix = pairs_of(vm["warm-start-fix"].as<std::string>(), "warm-start-fix", "NAME=VALUE")});
  }
  auto result = search::replay(recorded, options);
  std::optional<search::ReplayResult> warm_result;
  if (warm_data) {
    auto warm_options = options;
    warm_options.warm_start = warm_data->observations;
    warm_result = search::replay(recorded, warm_options);
  }
  std::optional<search::WarmStartReport> warm;
  if (warm_data) warm.emplace(search::WarmStartReport{*warm_data, *warm_result});
  const auto* report = warm ? &*warm : nullptr;
  // The text names what a recorded space file holds, which anyone may have written (Printable.h).
  std::cout << (vm.count("json") ? search::replay_json(recorded, result, report) + "\n"
                                 : results::printable(search::replay_text(recorded, result, report)));
  return 0;
}

}  // namespace flotilla::cli
