// Gnuplot.cpp — scripts and the gnuplot child process (see Gnuplot.h).
//
// The child gets its script as a file argument (not a pipe, so a large timeline cannot
// deadlock against gnuplot's output), stdout to /dev/null and stderr to a file we read back.
// No shell is involved: gnuplot is started by the one process runner (jobs/Subprocess.h).
#include "Gnuplot.h"

#include "flotilla/jobs/Subprocess.h"
#include "flotilla/results/Printable.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace flotilla::cli::results_cli {
namespace {

// A scratch directory removed on scope exit, for the script and gnuplot's stderr.
class ScratchDir {
 public:
  ScratchDir() {
    auto pattern = (std::filesystem::temp_directory_path() / "flotilla-plot-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error(fmt::format("cannot make a scratch directory: {}", std::strerror(errno)));
    m_path = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

PlotFile plot_file(const std::string& path, const std::string& size) {
  PlotFile file{.path = path};
  const auto ext = std::filesystem::path(path).extension().string();
  if (ext == ".png")
    file.format = PlotFile::Format::png;
  else if (ext == ".svg")
    file.format = PlotFile::Format::svg;
  else
    throw std::runtime_error(fmt::format("{}: the output file must end in .png or .svg", path));
  char x = 0;
  std::istringstream in(size);
  if (!(in >> file.width >> x >> file.height) || x != 'x' || !in.eof() || file.width < 100 || file.height < 100 ||
      file.width > 10000 || file.height > 10000)
    throw std::runtime_error(fmt::format("--size '{}': expected WIDTHxHEIGHT in pixels, 100 to 10000 each", size));
  return file;
}

// Single quotes, because inside double quotes gnuplot runs `backquotes` as shell commands and
// expands @macros and backslash escapes; inside single quotes it takes every character as it is
// ('' is a quote). A line break cannot be written there, so lines are joined by concatenation with
// a "\n" of our own: 'line 1'."\n".'line 2', a string expression that set title, set label, axis
// labels and tic lists all take. Other control bytes and invalid UTF-8 are shown escaped.
std::string gnuplot_string(std::string_view text) {
  std::string out;
  for (std::size_t begin = 0;;) {
    const auto end = text.find('\n', begin);
    if (begin > 0) out += ".\"\\n\".";
    out += '\'';
    for (char c : results::printable(text.substr(begin, end == std::string_view::npos ? end : end - begin)))
      out += c == '\'' ? std::string("''") : std::string(1, c);
    out += '\'';
    if (end == std::string_view::npos) return out;
    begin = end + 1;
  }
}

std::string cell(double value) { return std::isfinite(value) ? fmt::format("{}", value) : "NaN"; }

// Data lines run nothing, but a line break in a cell would end its row, and a row "EOD" would end
// the block early and run what follows as commands. So a line break is written as the escape \n
// (gnuplot's data reader turns it back into one, for multi-line labels), backslashes and double
// quotes are escaped, a tab becomes a blank, and other control bytes are shown escaped.
std::string text_cell(std::string_view text) {
  std::string out = "\"";
  for (char c : results::printable(text)) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += ' ';
    else if (c == '\\' || c == '"') out += '\\', out += c;
    else out += c;
  }
  return out + "\"";
}

std::string datablock(std::string_view name, const std::vector<std::vector<std::string>>& rows) {
  std::string out = fmt::format("${} << EOD\n", name);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? " " : "") + row[i];
    out += '\n';
  }
  return out + "EOD\n";
}

std::string script_header(const PlotFile& file, std::string_view title) {
  // noenhanced: metric names like time_s must not turn into subscripts.
  const auto terminal =
      file.format == PlotFile::Format::png
          ? fmt::format("pngcairo size {},{} noenhanced font 'DejaVu Sans,10' background rgb 'white'", file.width,
                        file.height)
          : fmt::format("svg size {},{} fixed noenhanced font 'DejaVu Sans,10' background rgb 'white'", file.width,
                        file.height);
  return fmt::format(
      "set terminal {}\nset output {}\nset encoding utf8\nset title {}\nset grid lc rgb '#dddddd'\n"
      "set border lc rgb '#555555'\n",
      terminal, gnuplot_string(file.path), gnuplot_string(title));
}

void run_gnuplot(const std::string& script, const PlotFile& file) {
  ScratchDir scratch;
  const auto script_path = scratch.path() / "plot.gp";
  const auto errors_path = scratch.path() / "stderr.txt";
  {
    std::ofstream out(script_path, std::ios::binary);
    if (!(out << script) || !out.flush())
      throw std::runtime_error("cannot write the gnuplot script to " + script_path.string());
  }
  using Output = jobs::SubprocessSpec::Output;
  // Two minutes: a chart of any campaign's size takes well under a second.
  const auto timeout = std::chrono::minutes(2);
  const auto run = jobs::run_subprocess({.argv = {"gnuplot", script_path.string()},
                                         .timeout = timeout,
                                         .stdout_to = Output::discard,
                                         .stderr_to = Output::file,
                                         .stderr_file = errors_path});
  if (!run.started && run.exit_code == 127)
    throw std::runtime_error("gnuplot not found: install Debian's gnuplot-nox (scripts/install-deps.sh does)");
  if (!run.started) throw std::runtime_error(fmt::format("cannot run gnuplot: {}", run.error));
  auto errors = read_file(errors_path);
  while (!errors.empty() && (errors.back() == '\n' || errors.back() == ' ')) errors.pop_back();
  if (!run.ok())
    throw std::runtime_error(fmt::format("gnuplot failed drawing {} ({}): {}", file.path, run.describe(timeout),
                                         errors.empty() ? "no message" : errors));
  std::error_code ec;
  if (std::filesystem::file_size(file.path, ec) == 0 || ec)
    throw std::runtime_error(
        fmt::format("gnuplot wrote nothing to {}{}{}", file.path, errors.empty() ? "" : ": ", errors));
}

}  // namespace flotilla::cli::results_cli
