// Plots.h — what the charts of `flotilla results plot` share (PlotCommand.cpp, LineagePlot.cpp):
// the drawn result, the palette, and the pieces of a script every chart writes the same way.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "Gnuplot.h"
#include "ResultsCli.h"

namespace flotilla::cli::results_cli {

using Rows = std::vector<std::vector<std::string>>;

inline constexpr const char* kBlue = "#1f77b4";
inline constexpr const char* kGreen = "#2ca02c";
inline constexpr const char* kRed = "#d62728";
inline constexpr const char* kGrey = "#9a9a9a";
inline constexpr const char* kLightBlue = "#9ecae1";
inline constexpr const char* kOrange = "#ff7f0e";
inline constexpr const char* kLightGrey = "#cfcfcf";
inline constexpr const char* kPaleRed = "#fbe0e0";
inline constexpr const char* kPurple = "#9467bd";
inline constexpr const char* kBrown = "#8c564b";
inline constexpr const char* kTeal = "#17becf";
inline constexpr const char* kGold = "#f2c14e";

// A chart: its gnuplot script, and what it shows as data (the `chart` member of --json), so
// tests check the content, not the pixels.
struct Drawn {
  std::string script;
  nlohmann::json data = nlohmann::json::object();
};

// "plot A, B, C" from the clauses whose data is not empty; gnuplot refuses a plot of nothing, so
// with none it throws "nothing to plot: WHAT".
std::string plot_line(const std::vector<std::pair<bool, std::string>>& clauses, const std::string& what);

// Breaks `text` into lines of at most `width` characters at spaces; its own line breaks stay.
std::string wrapped(const std::string& text, std::size_t width);

// The key of `entries` entries in a band of its own at the bottom, below the x axis label, with
// the bottom margin it needs.
std::string bottom_key(const PlotFile& file, std::size_t entries);

// The charts in files of their own.
Drawn lineage_script(const LoadedCampaign& campaign, const PlotFile& file);  // LineagePlot.cpp

}  // namespace flotilla::cli::results_cli
