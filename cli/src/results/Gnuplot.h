// Gnuplot.h — drawing through gnuplot (Debian's gnuplot-nox): the output file and its terminal,
// data blocks, quoting, and running gnuplot as a child process.
//
// Why gnuplot: gnuplot-nox renders PNG (cairo) and SVG with no display and no X libraries, so a
// headless CI machine draws exactly what a workstation draws, and flotilla stays free of a
// Python runtime dependency. The script is self-contained (data in inline data blocks), so
// `--script FILE` gives users a file they can edit and rerun with `gnuplot FILE`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flotilla::cli::results_cli {

struct PlotFile {
  enum class Format { png, svg };
  std::string path;
  Format format = Format::png;
  int width = 1000;
  int height = 600;
};

// Format from the extension (.png or .svg); size "WxH" in pixels (e.g. "1000x600").
PlotFile plot_file(const std::string& path, const std::string& size);

// The terminal, output and common style lines that open every script.
std::string script_header(const PlotFile& file, std::string_view title);

// `text` as a gnuplot string expression that gnuplot takes literally, whatever it holds (a
// results file's strings are untrusted): single-quoted ('it''s'), in which gnuplot runs no
// `backquotes` and expands no @macros; lines joined as 'line 1'."\n".'line 2'.
std::string gnuplot_string(std::string_view text);

// An inline data block: "$name << EOD\n...\nEOD\n"; each row's cells are already formatted.
std::string datablock(std::string_view name, const std::vector<std::vector<std::string>>& rows);
// A number as gnuplot reads it back exactly; "NaN" for none.
std::string cell(double value);
// A text cell: double-quoted for gnuplot's data reader, always one line, so no text can end the
// data block; a line break in `text` is a line break in the label.
std::string text_cell(std::string_view text);

// Runs gnuplot on `script`; throws std::runtime_error carrying gnuplot's own message when it
// fails, or an install hint when it is missing. Checks that the output file is not empty.
void run_gnuplot(const std::string& script, const PlotFile& file);

}  // namespace flotilla::cli::results_cli
