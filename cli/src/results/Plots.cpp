// Plots.cpp — the script pieces every chart shares (Plots.h).
#include "Plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace flotilla::cli::results_cli {

// "plot A, B, C" from the clauses whose data is not empty; gnuplot refuses a plot of nothing.
std::string plot_line(const std::vector<std::pair<bool, std::string>>& clauses, const std::string& what) {
  std::string line;
  for (const auto& [present, clause] : clauses)
    if (present) line += (line.empty() ? "plot " : ", \\\n     ") + clause;
  if (line.empty()) throw std::runtime_error("nothing to plot: " + what);
  return line + '\n';
}

// Breaks `text` into lines of at most `width` characters at spaces, for a warning or a title on a
// chart; its own line breaks stay.
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out, line;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const auto next = text.find_first_of(" \n", i);
    const auto word = text.substr(i, next == std::string::npos ? std::string::npos : next - i);
    if (!line.empty() && line.size() + 1 + word.size() > width) out += line + '\n', line.clear();
    line += (line.empty() ? "" : " ") + word;
    if (next == std::string::npos) break;
    if (text[next] == '\n') out += line + '\n', line.clear();
    i = next;
  }
  return out + line;
}

// The key in a band of its own at the bottom, below the x axis label: where gnuplot puts an
// outside key by itself, the label runs into its first line. Entries are up to about 240 px wide.
std::string bottom_key(const PlotFile& file, std::size_t entries) {
  const auto columns = static_cast<std::size_t>(std::max(1, (file.width - 40) / 240));
  const auto rows = (entries + columns - 1) / columns;
  return fmt::format("set bmargin {}\nset key at screen 0.5, screen 0.015 center bottom horizontal samplen 1.5 "
                     "width 1 maxcols {}\n",
                     4 + 1.25 * static_cast<double>(rows), columns);
}

}  // namespace flotilla::cli::results_cli
