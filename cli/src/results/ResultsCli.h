// ResultsCli.h — what the `flotilla results` subcommands share: the subcommand table entry, a
// campaign file read once, aligned text tables and the JSON pieces every subcommand prints.
//
// Conventions every subcommand keeps:
//  - Text is for people (aligned tables); --json prints exactly one JSON object for scripts.
//  - A file whose campaign did not finish is read like any other; it is flagged, in text on
//    stderr ("note: ...", so stdout stays a clean table or CSV) and in JSON as "run".
//  - Bad input throws; `flotilla` prints "flotilla results: message" and exits 1.
//  - Text may quote task output or a file someone sent: it is printed through results::printable
//    (no control byte reaches the terminal). JSON is escaped by its writer; CSV is data.
#pragma once

#include <boost/program_options.hpp>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/History.h"
#include "flotilla/results/Store.h"

namespace flotilla::cli::results_cli {

namespace po = boost::program_options;

struct Subcommand {
  std::string_view name;
  std::string_view synopsis;                              // the arguments after "flotilla results NAME"
  std::string_view what;                                  // one line for the command list
  void (*add_options)(po::options_description& options);  // may be null
  std::size_t min_files = 1;
  std::size_t max_files = 1;  // 0: no limit
  int (*run)(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out);
  // Its output is data (export's CSV), never escaped on the way out; see results_command.
  bool prints_data = false;
};

// Defined in the file of each subcommand; listed once in ResultsCommand.cpp.
extern const Subcommand kSummary, kHistory, kTop, kReport;  // ReportCommands.cpp
extern const Subcommand kCompare, kPareto, kParams;  // AnalysisCommands.cpp
extern const Subcommand kExport;                     // ExportCommand.cpp
extern const Subcommand kPlot;                       // PlotCommand.cpp
extern const Subcommand kTests;                      // TestsCommand.cpp
extern const Subcommand kProposals;                  // ProposalsCommand.cpp

// One campaign file, read once: summary, raw trials and events, and whether it finished.
struct LoadedCampaign {
  std::string path;
  results::CampaignSummary summary;
  std::vector<results::TrialRecord> trials;
  std::vector<results::EventRecord> events;
  std::vector<results::ProposalRecord> proposals;  // with their patch texts (docs/propose.md)
  results::RunStatus run;
};

// Reads `path` (StoreError with a clear message for missing, foreign or unsupported files) and,
// unless `json`, writes the "note: PATH: incomplete ..." line to stderr for an unfinished campaign.
// `fields`: outcomes for a subcommand that shows the summary alone (its trials then lack the
// texts and placement the summary does not read: results::Store::TrialFields).
LoadedCampaign load_campaign(const std::string& path, bool json,
                             results::Store::TrialFields fields = results::Store::TrialFields::all);

nlohmann::json run_json(const results::RunStatus& run);
nlohmann::json candidate_json(const results::CandidateSummary& candidate);
nlohmann::json optional_json(std::optional<double> value);

// Right-aligned numbers, left-aligned text; widths from the widest cell (UTF-8 aware).
class Table {
 public:
  enum class Align { left, right };
  Table& column(std::string heading, Align align = Align::right);
  Table& row(std::vector<std::string> cells);
  bool empty() const { return m_rows.empty(); }
  std::string text(std::string_view indent = "  ") const;

 private:
  std::vector<std::string> m_headings;
  std::vector<Align> m_align;
  std::vector<std::vector<std::string>> m_rows;
};

// "1.869", "-" for none; 4 significant digits, as `results summary` prints objectives.
std::string number(std::optional<double> value);
// "2.00x", "-" for none.
std::string ratio(std::optional<double> value);
// "gflops [GFLOP/s]", or the bare name when the name implies no unit.
std::string metric_label(const std::string& metric);

}  // namespace flotilla::cli::results_cli
