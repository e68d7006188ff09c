// HtmlReport.cpp — the self-contained HTML report (HtmlReport.h).
#include "flotilla/results/HtmlReport.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "flotilla/results/Charts.h"
#include "flotilla/results/Printable.h"

namespace flotilla::results {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// Untrusted text for the page: control bytes made visible (Printable.h), then escaped.
std::string safe(std::string_view text) { return html_escape(printable(text)); }

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : std::string("-"); }

// What hovering a point or a row shows: the candidate, its configuration, median and interval,
// status and confirmation.
std::string candidate_tooltip(const CampaignSummary& s, const CandidateSummary& c) {
  std::string text = fmt::format("candidate {}: {}", c.record.id, candidate_label(c));
  if (c.objective) text += fmt::format("\n{} {}", s.campaign.objective, number(*c.objective));
  if (c.interval) text += fmt::format(" [{}, {}]", number(c.interval->low), number(c.interval->high));
  text += fmt::format("\n{}", to_string(c.status));
  if (c.confirmation) {
    const auto& r = c.confirmation->result;
    text += fmt::format("\n{} {}x [{}, {}] over the baseline in {} pairs", stats::to_string(r.verdict), number(r.ratio),
                        number(r.low), number(r.high), r.pairs);
  }
  return text;
}

// The convergence chart as inline SVG: every evaluation's median (explored grey, verified blue,
// rolled back red) with its interval, the best so far as a step line, the winner ringed.
// Points outside the y range (Charts.h: outliers) sit on its edge, as in `results plot`.
std::string convergence_svg(const CampaignSummary& s, const History& history) {
  const auto chart = convergence_chart(s, history);
  constexpr double W = 860, H = 420, left = 70, right = 20, top = 20, bottom = 50;
  const double pw = W - left - right, ph = H - top - bottom;
  const auto x_of = [&](double x) { return left + (x - chart.x.low) / (chart.x.high - chart.x.low) * pw; };
  const auto y_of = [&](double y) {
    const double span = chart.y.high - chart.y.low;
    const double f = span > 0 ? (std::clamp(y, chart.y.low, chart.y.high) - chart.y.low) / span : 0.5;
    return top + (1 - f) * ph;
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"convergence\">\n",
      W, H);
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>\n", left, top, pw, ph);
  for (int i = 0; i <= 4; ++i) {  // y ticks
    const double v = chart.y.low + (chart.y.high - chart.y.low) * i / 4;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"end\">{}</text>\n", left - 6,
                       y_of(v) + 4, number(v));
  }
  const auto last = static_cast<std::size_t>(std::max(1.0, std::floor(chart.x.high)));
  const std::size_t step = std::max<std::size_t>(1, last / 10);
  for (std::size_t e = 1; e <= last; e += step)
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n",
                       x_of(static_cast<double>(e)), top + ph + 16, e);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">evaluation</text>\n", left + pw / 2,
                     H - 8);
  svg += fmt::format("<text x=\"14\" y=\"{}\" class=\"axis\" transform=\"rotate(-90 14 {})\" "
                     "text-anchor=\"middle\">{}</text>\n",
                     top + ph / 2, top + ph / 2, html_escape(s.campaign.objective));
  if (!chart.best.empty()) {  // best so far, a step line
    std::string path;
    for (std::size_t i = 0; i < chart.best.size(); ++i) {
      const double x = x_of(static_cast<double>(chart.best[i].first)), y = y_of(chart.best[i].second);
      if (i == 0) path += fmt::format("M{:.1f},{:.1f}", x, y);
      else path += fmt::format(" H{:.1f} V{:.1f}", x, y);
    }
    path += fmt::format(" H{:.1f}", x_of(chart.x.high));
    svg += fmt::format("<path d=\"{}\" class=\"best\"><title>best so far</title></path>\n", path);
  }
  for (std::size_t i = 0; i < chart.points.size(); ++i) {
    const auto& p = chart.points[i];
    const auto& c = s.candidates[static_cast<std::size_t>(p.candidate)];
    const double x = x_of(static_cast<double>(p.evaluation));
    svg += fmt::format("<g class=\"point {}\" data-candidate=\"{}\"><title>{}</title>", to_string(p.kind), p.candidate,
                       safe(candidate_tooltip(s, c)));
    if (p.high > p.low)
      svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" class=\"interval\"/>", x,
                         y_of(p.low), y_of(p.high));
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"/>", x, y_of(p.value), p.clipped ? 6 : 4);
    if (chart.winner == i)
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"10\" class=\"winner\"/>", x, y_of(p.value));
    svg += "</g>\n";
  }
  for (const auto& [evaluation, candidate] : chart.failed)
    svg += fmt::format("<g class=\"point failed\" data-candidate=\"{}\"><title>candidate {}: failed, no value</title>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">×</text></g>\n",
                       candidate, candidate, x_of(static_cast<double>(evaluation)), top + ph - 4);
  svg += "</svg>\n";
  return svg;
}

std::string top_table(const CampaignSummary& s, std::size_t rows) {
  std::string out = fmt::format(
      "<table class=\"top\"><thead><tr><th>rank</th><th>id</th><th>{}</th><th>interval</th><th>status</th>"
      "<th>confirmation</th><th>configuration</th></tr></thead><tbody>\n",
      html_escape(s.campaign.objective));
  const auto ranking = s.ranking();
  for (std::size_t r = 0; r < ranking.size() && r < rows; ++r) {
    const auto& c = s.candidates[ranking[r]];
    const bool winner = s.best && *s.best == ranking[r];
    std::string confirmation;
    if (c.confirmation)
      confirmation = fmt::format("{} {}x [{}, {}]", stats::verdict_key(c.confirmation->result.verdict),
                                 number(c.confirmation->result.ratio), number(c.confirmation->result.low),
                                 number(c.confirmation->result.high));
    out += fmt::format(
        "<tr{} title=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        winner ? " class=\"winner\"" : "", safe(candidate_tooltip(s, c)), r + 1, c.record.id,
        c.objective ? number(*c.objective) : "-",
        c.interval ? fmt::format("[{}, {}]", number(c.interval->low), number(c.interval->high)) : "-",
        to_string(c.status), safe(confirmation), safe(candidate_label(c)));
  }
  return out + "</tbody></table>\n";
}

std::string rolled_back_list(const CampaignSummary& s) {
  std::string out;
  for (const auto& c : s.candidates)
    if (c.status == CandidateStatus::rolled_back)
      out += fmt::format("<li title=\"{}\"><b>candidate {}</b> {}: {}</li>\n", safe(candidate_tooltip(s, c)),
                         c.record.id, safe(candidate_label(c)), safe(c.reason));
  return out.empty() ? "<p>none</p>\n" : "<ul class=\"rolled\">\n" + out + "</ul>\n";
}

std::string lineage_list(const CampaignSummary& s) {
  if (s.lineage.empty()) return "";
  std::string out = "<h2>Lineage of the winner</h2>\n<ol class=\"lineage\">\n";
  for (auto id : s.lineage) {
    const auto& c = s.candidates[static_cast<std::size_t>(id)];
    out += fmt::format("<li title=\"{}\">candidate {}: {}</li>\n", safe(candidate_tooltip(s, c)), id,
                       safe(c.proposal.empty() ? c.record.config : c.proposal));
  }
  return out + "</ol>\n";
}

constexpr std::string_view kStyle = R"(
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
pre.summary { background: #f6f6f6; padding: 1em; overflow-x: auto; font-size: 0.85em; }
svg.chart { width: 100%; height: auto; border: 1px solid #ddd; }
svg .frame { fill: none; stroke: #999; } svg .tick { font-size: 11px; fill: #555; }
svg .axis { font-size: 13px; fill: #333; } svg .best { fill: none; stroke: #2a7; stroke-width: 2; }
svg .point circle { fill: #999; } svg .point.verified circle { fill: #2560c0; }
svg .point.rolled_back circle { fill: #c03030; } svg .point .interval { stroke: #bbb; }
svg .point circle.winner { fill: none; stroke: #d4a000; stroke-width: 3; }
svg .point.failed text { fill: #c03030; font-size: 14px; }
svg .point:hover circle { stroke: #000; stroke-width: 1.5; }
table.top { border-collapse: collapse; font-size: 0.9em; } table.top td, table.top th { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: left; }
table.top tr.winner { background: #fff6d5; } table.top tr:hover { background: #eef; }
)";

}  // namespace

std::string html_report(const CampaignSummary& s, const History& history, std::string_view source) {
  const auto& info = s.campaign;
  std::string winner = "none";
  if (s.best) winner = fmt::format("candidate {}: {}", s.candidates[*s.best].record.id, candidate_label(s.candidates[*s.best]));
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>flotilla: {}</title>\n<style>{}</style>\n</head>\n<body>\n", safe(info.name), kStyle);
  out += fmt::format("<h1>Campaign {}</h1>\n<p>objective {} ({}) &middot; from {}</p>\n", safe(info.name),
                     safe(info.objective), safe(info.direction), safe(source));
  out += fmt::format("<p id=\"winner\" data-candidate=\"{}\"><b>Winner:</b> {}</p>\n",
                     s.best ? s.candidates[*s.best].record.id : -1, safe(winner));
  out += "<h2>Summary</h2>\n<pre class=\"summary\">" + safe(summary_text(s, 10)) + "</pre>\n";
  out += "<h2>Convergence</h2>\n<p>Each point is an evaluation's median with its interval; hover for the "
         "candidate. The line is the best so far; the ringed point is the winner.</p>\n"
         "<p class=\"legend\"><span style=\"color:#999\">&#9679;</span> explored "
         "<span style=\"color:#2560c0\">&#9679;</span> verified <span style=\"color:#c03030\">&#9679;</span> rolled "
         "back <span style=\"color:#c03030\">&times;</span> failed <span style=\"color:#d4a000\">&#9711;</span> winner "
         "<span style=\"color:#2a7\">&#9472;</span> best so far</p>\n";
  out += convergence_svg(s, history);
  out += "<h2>Top candidates</h2>\n" + top_table(s, 20);
  out += "<h2>Rolled back</h2>\n" + rolled_back_list(s);
  out += lineage_list(s);
  // Says the page rendered: a browser test reads this attribute (tests/integration).
  out += "<script>document.body.dataset.rendered = document.querySelectorAll('svg.chart').length === 1 ? 'ok' : "
         "'no chart';</script>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace flotilla::results
