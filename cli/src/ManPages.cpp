// ManPages.cpp — man(7) pages of `flotilla` and of each of its commands (flotilla-run.1,
// flotilla-results-summary.1, ...), written by `flotilla help --man DIR` at build time from the
// same tables as `--help` (Commands.h), so a page never lists an option the command lacks.
// Internal commands get no page. The pages carry no date, so a rebuild writes the same bytes.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "Commands.h"
#include "flotilla/scheduler/Options.h"

namespace flotilla::cli {
namespace {

// Text for roff: backslashes doubled, and a line never starts with a control character.
std::string esc(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else out += c;
    line_start = c == '\n';
  }
  return out;
}

// Option names and commands: '-' as \- so they print (and search) as ASCII hyphens.
std::string literal(std::string_view text) {
  std::string out;
  for (char c : esc(text)) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

std::string paragraphs(std::string_view text) {
  std::string out;
  for (std::size_t begin = 0; begin < text.size();) {
    auto end = std::min(text.find("\n\n", begin), text.size());
    out += ".PP\n" + esc(text.substr(begin, end - begin)) + '\n';
    begin = end + 2;
  }
  return out;
}

std::string header(std::string_view page, std::string_view summary) {
  std::string upper;
  for (char c : page) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return fmt::format(".TH {} 1 \"\" \"flotilla {}\" \"flotilla manual\"\n.SH NAME\n{} \\- {}\n", literal(upper),
                     FLOTILLA_VERSION, literal(page), esc(summary));
}

std::string synopsis(std::string_view command, std::string_view arguments) {
  return fmt::format(".SH SYNOPSIS\n.B {}\n{}\n", literal(command), literal(arguments));
}

// One .TP entry per option of a command's own options.
std::string options(const po::options_description& desc) {
  std::string out;
  for (const auto& o : desc.options()) {
    const auto shorter = o->canonical_display_name(po::command_line_style::allow_dash_for_short);
    std::string names = shorter.starts_with("-") ? fmt::format("\\fB{}\\fR, ", literal(shorter)) : "";
    names += fmt::format("\\fB\\-\\-{}\\fR", literal(o->long_name()));
    if (o->semantic()->max_tokens() > 0) names += fmt::format(" \\fI{}\\fR", esc(o->format_parameter()));
    out += fmt::format(".TP\n{}\n{}\n", names, esc(o->description()));
  }
  return out;
}

// Campaign settings (Options.cpp), grouped by section as they appear in the file.
std::string settings(const CommandInfo& c) {
  std::string out, section;
  for (const auto& decl : scheduler::option_table()) {
    if (c.settings == SettingsUse::overrides &&
        std::find(c.relevant.begin(), c.relevant.end(), decl.key) == c.relevant.end())
      continue;
    const auto dot = decl.key.rfind('.');
    if (auto s = std::string(decl.key.substr(0, dot)); s != section) out += fmt::format(".SS [{}]\n", section = s);
    std::string help(decl.help);
    if (!decl.default_value.empty()) help += fmt::format(" [default: {}]", decl.default_value);
    if (decl.required) help += " [required]";
    if (decl.multi) help += " [may be given several times]";
    out += fmt::format(".TP\n\\fB\\-\\-{}\\fR=\\fIVALUE\\fR   (in the file: \\fB{}\\fR = \\fIVALUE\\fR)\n{}\n",
                       literal(decl.key), literal(decl.key.substr(dot + 1)), esc(help));
  }
  return out;
}

// What a campaign's run exits with (run, sbatch and the overview); every other command exits 0 or 1.
constexpr std::string_view kExitStatus =
    ".SH EXIT STATUS\n0 done; 1 bad input or setup (the message names the file, line and key); 3 nothing "
    "verified; 4 stopped by \\fBflotilla cancel\\fR; 130 interrupted (run the same command again to resume).\n";
constexpr std::string_view kExitStatusPlain =
    ".SH EXIT STATUS\n0 done; 1 bad input or setup (the message names the file and what is wrong with it).\n";

std::string see_also(std::string_view page) {
  std::string refs;
  for (const auto& c : command_table())
    if (!c.internal && page != fmt::format("flotilla-{}", c.name))
      refs += fmt::format("{}\\fBflotilla\\-{}\\fR(1)", refs.empty() ? "" : ", ", literal(c.name));
  if (page != "flotilla") refs = "\\fBflotilla\\fR(1), " + refs;
  return fmt::format(
      ".SH SEE ALSO\n{}\n.PP\nThe campaign file, its placeholders and comments: \\fIdocs/config.md\\fR; the results "
      "file: \\fIdocs/results\\-schema.md\\fR; both under share/doc/flotilla of the installation.\n",
      refs);
}

std::string command_page(const CommandInfo& c) {
  const auto page = fmt::format("flotilla-{}", c.name);
  std::string out = header(page, c.summary) + synopsis(fmt::format("flotilla {}", c.name), c.synopsis) +
                    ".SH DESCRIPTION\n" + paragraphs(c.description) + ".SH OPTIONS\n" + options(c.options());
  if (c.settings == SettingsUse::all) out += ".SH CAMPAIGN SETTINGS\nIn the campaign file or on the command line.\n";
  if (c.settings == SettingsUse::overrides)
    out += ".SH CAMPAIGN SETTINGS\nAny campaign setting (\\fBflotilla\\-run\\fR(1)) may be given as "
           "\\fB\\-\\-section.key\\fR=\\fIVALUE\\fR; these matter most here.\n";
  if (c.settings != SettingsUse::none) out += settings(c);
  if (c.name == "results") {
    out += ".SH SUBCOMMANDS\n";
    for (const auto& s : results_subcommands())
      out += fmt::format(".TP\n\\fBflotilla results {}\\fR {}\n{} (\\fBflotilla\\-results\\-{}\\fR(1))\n", literal(s.name),
                         literal(s.synopsis), esc(s.what), literal(s.name));
  }
  if (c.epilog && c.name != "results") out += ".SH NOTES\n" + paragraphs(c.epilog());
  const bool campaign_run = c.name == "run" || c.name == "sbatch";
  return out + std::string(campaign_run ? kExitStatus : kExitStatusPlain) + see_also(page);
}

std::string results_page(const ResultsSubcommandInfo& s) {
  const auto page = fmt::format("flotilla-results-{}", s.name);
  return header(page, s.what) + synopsis(fmt::format("flotilla results {}", s.name), s.synopsis) +
         ".SH DESCRIPTION\n" + paragraphs(fmt::format("{}. A file of a running or crashed campaign reads like any "
                                                      "other and is flagged incomplete.",
                                                      s.what)) +
         ".SH OPTIONS\n" + options(s.options) + std::string(kExitStatusPlain) + see_also(page);
}

std::string overview_page() {
  std::string out = header("flotilla", "turns an intent into a verified result") +
                    ".SH SYNOPSIS\n.B flotilla\n\\fICOMMAND\\fR [\\fIARGUMENTS\\fR] [\\fIOPTIONS\\fR]\n" +
                    ".SH DESCRIPTION\n" +
                    paragraphs("flotilla is a batch scheduler for HPC clusters. It takes an intent, a campaign file "
                               "such as \"make this kernel as fast as possible without changing its output\", splits "
                               "it into explore tasks that benchmark candidate variants and evaluate tasks that run "
                               "their tests, and reports the fastest verified candidate, confirmed faster than the "
                               "baseline. Every result goes into one HDF5 file per campaign.") +
                    ".SH COMMANDS\n";
  for (const auto& c : command_table())
    if (!c.internal)
      out += fmt::format(".TP\n\\fBflotilla {}\\fR {}\n{} (\\fBflotilla\\-{}\\fR(1))\n", literal(c.name),
                         literal(c.synopsis), esc(c.summary), literal(c.name));
  out += ".TP\n\\fBflotilla help\\fR [\\fICOMMAND\\fR], \\fBflotilla\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR\n"
         "the options of a command\n.TP\n\\fBflotilla \\-\\-version\\fR\nthe version\n";
  return out + std::string(kExitStatus) + see_also("flotilla");
}

void write_page(const std::filesystem::path& dir, const std::string& name, const std::string& text, std::ostream& log) {
  const auto path = dir / (name + ".1");
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
  log << path.string() << '\n';
}

}  // namespace

void write_man_pages(const std::string& dir, std::ostream& log) {
  std::filesystem::create_directories(dir);
  write_page(dir, "flotilla", overview_page(), log);
  for (const auto& c : command_table())
    if (!c.internal) write_page(dir, fmt::format("flotilla-{}", c.name), command_page(c), log);
  for (const auto& s : results_subcommands())
    write_page(dir, fmt::format("flotilla-results-{}", s.name), results_page(s), log);
}

}  // namespace flotilla::cli
