// HtmlReport.h — `flotilla results report FILE.h5 -o report.html`: one self-contained HTML file a
// person can share (docs/analysis.md, "A report to share"). Nothing is fetched when it is viewed:
// the style, the charts (inline SVG) and a few lines of script are in the file. It holds the
// summary as `results summary` prints it, the convergence chart (each point's configuration,
// median and interval on hover, the winner ringed), the top candidates, the rolled-back ones with
// their failing tests, and the winner's lineage when proposers wrote it.
//
// Everything from the results file is data someone may have sent: it is passed through
// results::printable and HTML-escaped, so no byte of it becomes markup or script.
#pragma once

#include <string>
#include <string_view>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/History.h"

namespace flotilla::results {

// Text made safe inside HTML elements and attribute values (& < > " ').
std::string html_escape(std::string_view text);

// The whole document. `source` names the results file it was made from (shown, escaped).
std::string html_report(const CampaignSummary& summary, const History& history, std::string_view source);

}  // namespace flotilla::results
