// Validate.cpp — turns raw (value, where) pairs into typed Settings with located errors.
#include <array>
#include <charconv>
#include <algorithm>
#include <set>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <sstream>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "BuildInputs.h"
#include "ChoiceValues.h"
#include "Ini.h"
#include "flotilla/scheduler/Options.h"
#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/Command.h"
#include "flotilla/jobs/Metrics.h"
#include "flotilla/results/Stats.h"
#include "flotilla/search/Strategy.h"
#include "flotilla/suites/FilePatterns.h"
#include "flotilla/suites/PerFile.h"
#include "flotilla/suites/Protocols.h"

namespace flotilla::scheduler {
namespace {

[[noreturn]] void bad(const RawValue& raw, std::string_view key, std::string_view what) {
  auto dot = key.find('.');
  throw ConfigError(fmt::format("{}: [{}] {}: '{}' {}", raw.where, key.substr(0, dot), key.substr(dot + 1), raw.value, what));
}

class Reader {
 public:
  Reader(RawValues& raw, std::string display) : m_raw(raw), m_display(std::move(display)) {}
  const std::string& display() const { return m_display; }

  // The single value of a key (its default when absent; nullptr when absent without default).
  const RawValue* one(std::string_view key) {
    auto it = m_raw.find(key);
    if (it != m_raw.end() && !it->second.empty()) {
      if (it->second.size() > 1)
        throw ConfigError(fmt::format("{}: [{}] {} given twice (first at {})", it->second[1].where, section(key),
                                      name(key), it->second[0].where));
      return &it->second[0];
    }
    const auto* decl = find_option(key);
    if (decl->required) throw ConfigError(fmt::format("{}: [{}] {} is required", m_display, section(key), name(key)));
    if (decl->default_value.empty()) return nullptr;
    m_defaults.push_back({std::string(decl->default_value), "default"});
    return &m_defaults.back();
  }
  std::vector<RawValue> all(std::string_view key) {
    auto it = m_raw.find(key);
    if ((it == m_raw.end() || it->second.empty()) && find_option(key)->required)
      throw ConfigError(fmt::format("{}: [{}] {} is required", m_display, section(key), name(key)));
    return it == m_raw.end() ? std::vector<RawValue>{} : it->second;
  }
  std::string text(std::string_view key) {
    auto* raw = one(key);
    if (raw && raw->value.empty() && find_option(key)->required) bad(*raw, key, "must not be empty");
    return raw ? raw->value : std::string();
  }
  long long integer(std::string_view key, long long min, long long max) {
    auto* raw = one(key);
    long long v = 0;
    auto [p, ec] = std::from_chars(raw->value.data(), raw->value.data() + raw->value.size(), v);
    const bool whole = p == raw->value.data() + raw->value.size();
    // A number past the limit says the limit; one too large for any integer is past it too.
    if (whole && (ec == std::errc::result_out_of_range || (ec == std::errc{} && v > max)) && raw->value[0] != '-')
      bad(*raw, key, fmt::format("is above the largest value allowed, {}", max));
    if (ec != std::errc{} || !whole || v < min)
      bad(*raw, key, min == 0 ? "is not a non-negative integer" : "is not a positive integer");
    return v;
  }
  bool boolean(std::string_view key) {
    auto* raw = one(key);
    if (raw->value != "true" && raw->value != "false") bad(*raw, key, "is not true or false");
    return raw->value == "true";
  }
  // A finite number in [min, max].
  double real(std::string_view key, double min, double max, std::string_view what) {
    auto* raw = one(key);
    char* end = nullptr;
    const double v = std::strtod(raw->value.c_str(), &end);
    if (end == raw->value.c_str() || *end != '\0' || !std::isfinite(v) || v < min || v > max) bad(*raw, key, what);
    return v;
  }
  std::chrono::milliseconds duration(std::string_view key) {
    auto* raw = one(key);
    auto d = parse_duration(raw->value);
    if (!d) bad(*raw, key, "is not a duration (e.g. 500ms, 20s, 2m, 1h; 0 = none)");
    return *d;
  }

 private:
  static std::string section(std::string_view key) { return std::string(key.substr(0, key.find('.'))); }
  static std::string name(std::string_view key) { return std::string(key.substr(key.find('.') + 1)); }
  RawValues& m_raw;
  std::string m_display;
  std::deque<RawValue> m_defaults;
};

void read_space(Reader& r, Settings& s) {
  for (const auto& raw : r.all("space.param")) {
    try {
      s.space.add_parameter(search::parse_parameter(raw.value));
    } catch (const search::SpaceError& e) {
      throw ConfigError(fmt::format("{}: [space] {}", raw.where, e.what()));
    }
  }
  for (const auto& raw : r.all("space.constraint")) {
    try {
      s.space.add_constraint(raw.value);
    } catch (const search::SpaceError& e) {
      throw ConfigError(fmt::format("{}: [space] {}", raw.where, e.what()));
    }
  }
}

Gate read_gate(Reader& r) {
  auto* raw = r.one("evaluate.gate");
  if (raw->value == "all") return Gate{Gate::Kind::all, 0};
  // Exactly "top K" or "top K per round", K from 1 to 100000: nothing before, between or after.
  std::istringstream words(raw->value);
  std::vector<std::string> w;
  for (std::string word; words >> word;) w.push_back(word);
  long long k = 0;
  const bool shape = (w.size() == 2 || (w.size() == 4 && w[2] == "per" && w[3] == "round")) && w[0] == "top";
  if (shape) {
    auto [end, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), k);
    if (ec == std::errc{} && end == w[1].data() + w[1].size() && k >= 1 && k <= 100'000)
      return Gate{Gate::Kind::top, static_cast<int>(k)};
    bad(*raw, "evaluate.gate", "has K outside 1..100000 (the candidates verified per round)");
  }
  bad(*raw, "evaluate.gate", "is not a gate (expected 'top K per round' or 'all')");
}

// A command template must split cleanly and use only placeholders that will have values.
// The parameters a command or env template names whose choices have values (ChoiceValues.h):
// each value may name only what the command itself may (but {files} and {report}, filled after
// the values are expanded), and the error names the parameter's own line.
void check_choice_values(Reader& r, const Settings& s, const std::vector<std::string>& used,
                         std::vector<std::string> known, const std::string& command) {
  std::erase_if(known, [](const std::string& name) { return name == "files" || name == "report"; });
  for (const auto& p : s.space.parameters()) {
    if (p.choice_values.empty() || !std::binary_search(used.begin(), used.end(), p.name)) continue;
    if (auto problem = choice_value_problem(p, s.space, known, command)) {
      std::string where = r.display();
      for (const auto& raw : r.all("space.param")) {
        std::istringstream declared(raw.value.substr(0, raw.value.find(':')));
        std::string name;
        if (declared >> name && name == p.name) where = raw.where;
      }
      throw ConfigError(fmt::format("{}: [space] param '{}': {}", where, p.name, *problem));
    }
  }
}

void check_command(Reader& r, const Settings& s, std::string_view key, std::vector<std::string> extra) {
  auto* raw = r.one(key);
  if (!raw || raw->value.empty()) return;
  for (const auto& p : s.space.parameters()) extra.push_back(p.name);
  if (!s.build_command.empty()) extra.push_back("build_dir");  // every command may use the build
  if (!s.propose.tree.empty()) extra.push_back("tree");        // and the candidate's source tree
  std::sort(extra.begin(), extra.end());
  extra.erase(std::unique(extra.begin(), extra.end()), extra.end());
  auto dot = key.find('.');
  try {
    for (const auto& name : jobs::placeholders(raw->value))
      if (!std::binary_search(extra.begin(), extra.end(), name))
        throw jobs::CommandError(fmt::format("unknown placeholder {{{}}} (known: {})", name, fmt::join(extra, ", ")));
  } catch (const jobs::CommandError& e) {
    throw ConfigError(fmt::format("{}: [{}] {}: {}", raw->where, key.substr(0, dot), key.substr(dot + 1), e.what()));
  }
  check_choice_values(r, s, jobs::placeholders(raw->value), extra,
                      fmt::format("[{}] {}", key.substr(0, dot), key.substr(dot + 1)));
}

// [explore] env / [evaluate] env: NAME=TEMPLATE lines, the template checked as the command is.
std::vector<std::pair<std::string, std::string>> read_env(Reader& r, const Settings& s, std::string_view key,
                                                          std::vector<std::string> known) {
  for (const auto& p : s.space.parameters()) known.push_back(p.name);
  if (!s.build_command.empty()) known.push_back("build_dir");
  if (!s.propose.tree.empty()) known.push_back("tree");
  std::sort(known.begin(), known.end());
  const auto dot = key.find('.');
  std::vector<std::pair<std::string, std::string>> env;
  std::set<std::string> names;
  for (const auto& raw : r.all(key)) {
    const auto fail = [&](const std::string& what) {
      throw ConfigError(fmt::format("{}: [{}] {}: '{}' {}", raw.where, key.substr(0, dot), key.substr(dot + 1), raw.value, what));
    };
    const auto eq = raw.value.find('=');
    if (eq == std::string::npos || eq == 0) fail("is not NAME=VALUE");
    const std::string name = raw.value.substr(0, eq), value = raw.value.substr(eq + 1);
    if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') fail("does not start with a variable name");
    for (char c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') fail("does not start with a variable name");
    if (name.starts_with("FLOTILLA_")) fail("sets a variable flotilla sets itself (FLOTILLA_*)");
    if (!names.insert(name).second) fail("sets " + name + " a second time");
    try {
      for (const auto& used : jobs::placeholders(value))
        if (!std::binary_search(known.begin(), known.end(), used))
          throw jobs::CommandError(fmt::format("unknown placeholder {{{}}} (known: {})", used, fmt::join(known, ", ")));
    } catch (const jobs::CommandError& e) {
      fail(e.what());
    }
    check_choice_values(r, s, jobs::placeholders(value), known, fmt::format("[{}] {}", key.substr(0, dot), key.substr(dot + 1)));
    env.emplace_back(name, value);
  }
  return env;
}

// suite = per_file: the command runs once per file ({file}); summary, pass_when, parallel and
// no_drop, each checked now (the pattern compiled, the expression's names known) so a typo is a
// config error naming its line, not a failure in every file.
void read_per_file(Reader& r, Settings& s) {
  const auto setting_error = [](const suites::PatternError& e) {  // "evaluate.summary: WHAT" without its key
    const std::string what = e.what();
    return what.substr(what.find(": ") + 2);
  };
  std::optional<suites::SummaryPattern> summary;
  if (auto* raw = r.one("evaluate.summary"); raw && !raw->value.empty()) {
    try {
      summary.emplace(raw->value);
    } catch (const suites::PatternError& e) {
      throw ConfigError(fmt::format("{}: [evaluate] summary: {}", raw->where, setting_error(e)));
    }
    s.suite_summary = raw->value;
  }
  if (auto* raw = r.one("evaluate.pass_when"); raw && !raw->value.empty()) {
    if (!summary) bad(*raw, "evaluate.pass_when", "needs [evaluate] summary = PATTERN (its named groups are the variables)");
    try {
      suites::PassCondition(raw->value, summary->names());
    } catch (const suites::PatternError& e) {
      throw ConfigError(fmt::format("{}: [evaluate] pass_when: {}", raw->where, setting_error(e)));
    }
    s.suite_pass_when = raw->value;
  }
  s.suite_parallel = static_cast<int>(r.integer("evaluate.parallel", 0, 100'000));
  if (auto* raw = r.one("evaluate.no_drop"); raw && !raw->value.empty()) {
    if (s.require != results::TestGate::no_regression)
      bad(*raw, "evaluate.no_drop", "needs [evaluate] require = no_regression (it compares with the baseline)");
    for (const auto& name : suites::split_file_patterns(raw->value)) {  // names separated by blanks
      if (!summary || std::find(summary->names().begin(), summary->names().end(), name) == summary->names().end())
        bad(*raw, "evaluate.no_drop",
            fmt::format("names '{}', which is no named group of [evaluate] summary{}", name,
                        summary ? fmt::format(" (its groups: {})", fmt::join(summary->names(), ", ")) : ""));
      s.suite_no_drop.push_back(name);
    }
  }
  if (s.require == results::TestGate::no_regression && !s.baseline)
    bad(*r.one("evaluate.require"), "evaluate.require", "needs [intent] baseline to compare against");
}

// [evaluate] suite, files, report, require, rerun_failures, and the placeholders each suite
// protocol gives its command and requires of it (suites/Protocols.h).
void read_suite(Reader& r, Settings& s) {
  auto* kind = r.one("evaluate.suite");
  const auto* protocol = suites::find_suite_protocol(kind->value);
  if (!protocol) bad(*kind, "evaluate.suite", "is not one of: " + suites::suite_protocol_names());
  s.suite = protocol->kind;
  const bool per_file = protocol->per_file_checker;
  const bool file_suite = protocol->file_list;
  std::vector<std::string> placeholders{"candidate", "shard", "shards"};
  placeholders.insert(placeholders.end(), protocol->placeholders.begin(), protocol->placeholders.end());
  check_command(r, s, "evaluate.command", placeholders);

  auto* files = r.one("evaluate.files");  // nullptr when not given
  s.suite_files = files ? files->value : std::string();
  if (file_suite && s.suite_files.empty()) bad(*kind, "evaluate.suite", "needs [evaluate] files = GLOB");
  if (!file_suite && files) bad(*files, "evaluate.files", "is used only with suite = files or per_file");
  for (const char* key : {"evaluate.summary", "evaluate.pass_when", "evaluate.no_drop", "evaluate.parallel"})
    if (auto* raw = r.one(key); raw && !raw->value.empty() && raw->where != "default" && !per_file)
      bad(*raw, key, "is used only with suite = per_file");
  auto* paths = r.one("evaluate.paths");  // lit, pytest: where the runner finds its tests
  s.suite_paths = paths ? paths->value : std::string();
  if (protocol->discovery.paths && s.suite_paths.empty())
    bad(*kind, "evaluate.suite", "needs [evaluate] paths = PATH ... (where the runner finds its tests)");
  if (!protocol->discovery.paths && paths) bad(*paths, "evaluate.paths", "is used only with suite = lit or pytest");
  auto* list = r.one("evaluate.list");
  s.suite_list = list ? list->value : std::string();
  const bool self_sharded = protocol->self_sharded;
  if (list && !self_sharded) bad(*list, "evaluate.list", "is used only with suite = junit or tap");
  if (self_sharded && s.suite_list.empty())
    bad(*kind, "evaluate.suite",
        "needs [evaluate] list = COMMAND (it prints the test names, one a line, so a test the shards leave out is "
        "caught), or list = none to accept the reports as complete");
  if (self_sharded && s.suite_list != "none") check_command(r, s, "evaluate.list", {"candidate"});
  auto* report = r.one("evaluate.report");
  const auto* format = suites::find_suite_protocol(report->value);
  if (!format || !format->files_report) bad(*report, "evaluate.report", "is not one of: " + suites::files_report_names());
  s.suite_report = format->kind;

  auto* require = r.one("evaluate.require");
  if (require->value == "all_pass") s.require = results::TestGate::all_pass;
  else if (require->value == "no_regression") s.require = results::TestGate::no_regression;
  else bad(*require, "evaluate.require", "is not one of: all_pass, no_regression");
  auto* rerun = r.one("evaluate.rerun_failures");
  if (rerun->value != "true" && rerun->value != "false") bad(*rerun, "evaluate.rerun_failures", "is not true or false");
  s.rerun_failures = rerun->value == "true";

  if (!protocol->has_tests()) return;
  const auto uses = [&](std::string_view name) {
    const auto used = jobs::placeholders(s.evaluate_command);
    return std::find(used.begin(), used.end(), name) != used.end();
  };
  if (s.evaluate_command.empty()) bad(*kind, "evaluate.suite", "needs [evaluate] command");
  for (const auto& required : protocol->required)
    if (!uses(required.name)) bad(*r.one("evaluate.command"), "evaluate.command", required.why);
  if (per_file) return read_per_file(r, s);
  // Without {shard}, every shard of a junit/tap command would run the same tests.
  if (self_sharded && s.shards > 1 && !uses("shard"))
    bad(*r.one("evaluate.command"), "evaluate.command", "must select its tests by {shard} of {shards} (shards > 1)");
  if (s.require == results::TestGate::no_regression && !s.baseline)
    bad(*require, "evaluate.require", "needs [intent] baseline to compare against");
}

// evaluate.shards: a number, or auto: one shard per slot the shards can run in at once
// (suites::auto_shard_count without recorded durations, docs/tests.md): resources.slots, or when
// it is 0, what the backend's own settings run at once (Slurm: nodes x ranks_per_node), else the
// CPUs here.
int read_shards(Reader& r, const jobs::BackendConfig* backend) {
  if (const auto* raw = r.one("evaluate.shards"); raw->value != "auto") {
    int shards = 0;
    const auto [end, ec] = std::from_chars(raw->value.data(), raw->value.data() + raw->value.size(), shards);
    if (ec != std::errc{} || end != raw->value.data() + raw->value.size() || shards < 1 || shards > 1'000'000)
      bad(*raw, "evaluate.shards", "is not a positive integer or auto");
    return shards;
  }
  auto slots = static_cast<unsigned>(r.integer("resources.slots", 0, 4096));
  if (slots == 0 && backend) slots = backend->tasks_at_once();
  if (slots == 0) slots = std::max(1u, std::thread::hardware_concurrency());
  return suites::auto_shard_count(std::nan(""), std::numeric_limits<std::size_t>::max(), slots, 0);
}

// A name that must be one of a registry's names.
std::string registered(Reader& r, std::string_view key, const std::vector<std::string_view>& names) {
  auto* raw = r.one(key);
  if (std::find(names.begin(), names.end(), raw->value) == names.end())
    bad(*raw, key, fmt::format("is not one of: {}", fmt::join(names, ", ")));
  return raw->value;
}

using results::is_metric_name;

// A campaign's name names job folders, Slurm jobs and files: letters, digits and . _ + -, not
// starting with . or - (so never "..", a path, an option or a second line).
bool is_campaign_name(std::string_view name) {
  if (name.empty() || name.size() > 100 || name.front() == '.' || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-';
  });
}

// The campaign's settings as a backend's registry row reads its own (jobs/BackendSettings.h):
// through the Reader, so its errors name file, line, section and key as every other setting's.
class BackendSource final : public jobs::SettingsSource {
 public:
  explicit BackendSource(Reader& r) : m_r(r) {}
  bool given(std::string_view key) override {
    const auto* raw = m_r.one(key);
    return raw && raw->where != "default";
  }
  std::string text(std::string_view key) override { return m_r.text(key); }
  long long integer(std::string_view key, long long min, long long max) override { return m_r.integer(key, min, max); }
  std::chrono::milliseconds duration(std::string_view key) override { return m_r.duration(key); }
  std::string choice(std::string_view key, const std::vector<std::string_view>& names) override {
    return registered(m_r, key, names);
  }
  std::vector<std::string> all(std::string_view key) override {
    std::vector<std::string> values;
    for (const auto& raw : m_r.all(key)) values.push_back(raw.value);
    return values;
  }
  [[noreturn]] void fail(std::string_view key, std::string_view what, std::size_t item) override {
    const auto values = m_r.all(key);
    bad(item < values.size() ? values[item] : *m_r.one(key), key, what);
  }
  [[noreturn]] void fail_bare(std::string_view key, std::string_view what) override {
    const auto dot = key.rfind('.');
    throw ConfigError(fmt::format("{}: [{}] {}: {}", m_r.one(key)->where, key.substr(0, dot), key.substr(dot + 1), what));
  }

 private:
  Reader& m_r;
};

// "NAME: SHARE_METRIC: PARAM PARAM ..." (the parameter list may be empty).
Component parse_component(const RawValue& raw, const search::Space& space) {
  constexpr std::string_view key = "intent.component";
  auto first = raw.value.find(':');
  auto second = first == std::string::npos ? first : raw.value.find(':', first + 1);
  if (second == std::string::npos) bad(raw, key, "is not 'NAME: SHARE_METRIC: PARAMS'");
  Component c{.name = std::string(trim(std::string_view(raw.value).substr(0, first))),
              .share_metric = std::string(trim(std::string_view(raw.value).substr(first + 1, second - first - 1)))};
  if (!is_metric_name(c.name)) bad(raw, key, fmt::format("has a bad component name '{}'", c.name));
  if (!is_metric_name(c.share_metric))
    bad(raw, key, fmt::format("has a bad share metric name '{}' (metric names: [A-Za-z_][A-Za-z0-9_.]*)", c.share_metric));
  std::istringstream words(raw.value.substr(second + 1));
  for (std::string param; words >> param;) {
    const auto& ps = space.parameters();
    if (std::none_of(ps.begin(), ps.end(), [&](const auto& p) { return p.name == param; }))
      bad(raw, key, fmt::format("names '{}', which is not a [space] parameter", param));
    if (std::find(c.params.begin(), c.params.end(), param) != c.params.end())
      bad(raw, key, fmt::format("names parameter '{}' twice", param));
    c.params.push_back(param);
  }
  return c;
}

// [intent] stages, stage_threshold and component. Components are checked even when stages = none,
// so the same file runs either way.
void read_stages(Reader& r, Settings& s) {
  for (const auto& raw : r.all("intent.component")) {
    auto c = parse_component(raw, s.space);
    for (const auto& other : s.components)
      if (other.name == c.name) bad(raw, "intent.component", fmt::format("repeats component '{}'", c.name));
    s.components.push_back(std::move(c));
  }
  const auto* threshold = r.one("intent.stage_threshold");
  char* end = nullptr;
  s.stage_threshold = std::strtod(threshold->value.c_str(), &end);
  if (end == threshold->value.c_str() || *end != '\0' || !(s.stage_threshold >= 0) || s.stage_threshold > 10)
    bad(*threshold, "intent.stage_threshold", "is not a fraction from 0 to 10");
  const auto* stages = r.one("intent.stages");
  if (stages->value != "none" && stages->value != "bottleneck") bad(*stages, "intent.stages", "is not none or bottleneck");
  s.staged = stages->value == "bottleneck";
  if (!s.staged) return;
  if (!s.baseline) bad(*stages, "intent.stages", "needs [intent] baseline: the first stage profiles it");
  if (s.evaluate_command.empty())
    bad(*stages, "intent.stages", "needs [evaluate] command: every stage's winner must be verified");
  if (s.components.empty() ||
      (!s.propose.active() &&
       std::none_of(s.components.begin(), s.components.end(), [](const auto& c) { return !c.params.empty(); })))
    bad(*stages, "intent.stages",
        "needs at least one [intent] component with parameters (or a [propose] command that changes the code)");
  // A stage pins every other parameter to the incumbent's value (a predicate); only an enumerable
  // space lets every strategy find the few configurations left.
  for (const auto& p : s.space.parameters())
    if (p.continuous()) bad(*stages, "intent.stages", fmt::format("needs a finite space; '{}' is real", p.name));
  if (s.space.grid_size() > search::Space::kEnumerateLimit)
    bad(*stages, "intent.stages", fmt::format("needs a space of at most {} grid points", search::Space::kEnumerateLimit));
}

}  // namespace

RawValues merge_sources(RawValues file, RawValues overrides) {
  for (auto& [key, values] : overrides) file[key] = std::move(values);
  return file;
}

// intent.objective and intent.direction, or intent.objectives and intent.pick (docs/objectives.md).
void read_objectives(Reader& r, Settings& s) {
  const auto* objective = r.one("intent.objective");
  const auto* objectives = r.one("intent.objectives");
  if (objective && objectives)
    bad(*objectives, "intent.objectives",
        fmt::format("is given with intent.objective (at {}): give one objective, or list them all here",
                    objective->where));
  if (!objective && !objectives)
    throw ConfigError(fmt::format("{}: [intent] objective or objectives is required", r.display()));
  if (objective) {
    s.objective = objective->value;
    if (!results::is_metric_name(s.objective))
      bad(*objective, "intent.objective",
          "is not a metric name a task can print ([A-Za-z_][A-Za-z0-9_.]*, at most 63 bytes)");
    auto* direction = r.one("intent.direction");
    if (direction->value != "maximize" && direction->value != "minimize")
      bad(*direction, "intent.direction", "is not maximize or minimize");
    s.maximize = direction->value == "maximize";
    // wall_time (jobs/Metrics.h): flotilla times the explore command itself, and less is better.
    if (s.objective == jobs::kWallTimeMetric) {
      if (direction->where != "default" && s.maximize)
        bad(*direction, "intent.direction", "is not minimize, and intent.objective = wall_time is a time to minimize");
      s.maximize = false;
    }
    if (auto* pick = r.one("intent.pick"); pick->where != "default")
      bad(*pick, "intent.pick", "needs intent.objectives: with one objective the best verified candidate wins");
    return;
  }
  if (auto* direction = r.one("intent.direction"); direction->where != "default")
    bad(*direction, "intent.direction", "is given with intent.objectives, which names each objective's direction");
  // The problem names the item it is about, so the whole value is not repeated before it.
  if (auto problem = results::objectives_problem(objectives->value); !problem.empty())
    throw ConfigError(fmt::format("{}: [intent] objectives: {}", objectives->where, problem));
  s.objectives = results::parse_objectives(objectives->value);
  for (std::size_t i = 0; i < s.objectives.size(); ++i)
    if (s.objectives[i].metric == jobs::kWallTimeMetric && (i > 0 || s.objectives[i].maximize))
      bad(*objectives, "intent.objectives",
          "names wall_time, which must come first and be :min (flotilla times the command for its first objective)");
  s.objective = s.objectives.front().metric;
  s.maximize = s.objectives.front().maximize;
  auto* pick = r.one("intent.pick");
  if (auto problem = results::pick_problem(pick->value, s.objectives.size()); !problem.empty())
    throw ConfigError(fmt::format("{}: [intent] pick: {}", pick->where, problem));
  s.pick = results::parse_pick(pick->value, s.objectives.size());
  if (s.objectives.size() == 1) {  // one objective, written the other way
    if (pick->where != "default")
      bad(*pick, "intent.pick", "needs two or more intent.objectives: with one the best verified candidate wins");
    s.objectives.clear();
  }
}

// What several objectives change in the rest of the settings (docs/objectives.md): a target and
// confirmation speak of one objective's speed-up, so they are refused when asked for and off
// otherwise; adaptive repeats race one objective against the incumbent's, so they are off.
void check_several_objectives(Reader& r, Settings& s) {
  if (s.objectives.empty()) return;
  if (s.staged)
    bad(*r.one("intent.stages"), "intent.stages",
        "needs one objective: each stage keeps the incumbent that one objective says is best");
  if (auto* target = r.one("intent.target"))
    bad(*target, "intent.target", "needs one objective: with several, no single value says the campaign is done");
  if (auto* confirm = r.one("confirm.enabled"); confirm->where != "default" && s.confirm)
    bad(*confirm, "confirm.enabled",
        "needs one objective: a confirmation measures one objective's speed-up over the baseline, and with "
        "several the pick may trade one objective for another (docs/objectives.md)");
  s.confirm = false;
  if (auto* max_repeats = r.one("explore.max_repeats"); max_repeats->where != "default" && s.max_repeats != s.repeats)
    bad(*max_repeats, "explore.max_repeats",
        "needs one objective: adaptive repeats race one objective against the incumbent's; with several, every "
        "candidate gets explore.repeats");
  s.max_repeats = s.repeats;
  if (auto* strategy = r.one("search.strategy"); strategy->where == "default") s.strategy = "parego";
}

// search.fidelity: a discrete parameter of at most hyperband's rungs, searched by hyperband, the
// baseline at its full value.
void read_fidelity(Reader& r, Settings& s) {
  const auto* raw = r.one("search.fidelity");
  if (!raw) return;
  const auto& params = s.space.parameters();
  const auto it = std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.name == raw->value; });
  if (it == params.end()) bad(*raw, "search.fidelity", "is not a [space] parameter");
  if (it->continuous() || it->grid_size() < 2 || it->grid_size() > 5)
    bad(*raw, "search.fidelity",
        fmt::format("needs a parameter of 2 to 5 values (hyperband's rungs); '{}' has {}", it->name,
                    it->continuous() ? std::string("a real range") : std::to_string(it->grid_size())));
  s.fidelity = raw->value;
  if (auto* strategy = r.one("search.strategy"); strategy->where == "default") s.strategy = "hyperband";
  else if (s.strategy != "hyperband")
    bad(*strategy, "search.strategy",
        "cannot search over search.fidelity: hyperband is the strategy that spends evaluations over a fidelity");
  if (!s.objectives.empty())
    bad(*raw, "search.fidelity", "needs one objective: a front of screened candidates would mix fidelities");
  if (s.staged) bad(*raw, "search.fidelity", "cannot be used with intent.stages = bottleneck");
  if (s.baseline && !s.baseline->empty()) {
    const auto baseline = s.space.parse_configuration(*s.baseline);
    const auto d = static_cast<std::size_t>(it - params.begin());
    if (it->format(baseline[d]) != s.fidelity_full())
      bad(*r.one("intent.baseline"), "intent.baseline",
          fmt::format("has {}={}: the baseline is the reference at full fidelity ({}={})", it->name,
                      it->format(baseline[d]), it->name, s.fidelity_full()));
  }
}

// [propose] (docs/propose.md): the proposer's command and its rules; the tree it writes patches
// against, whose content is part of the fingerprint.
void read_propose(Reader& r, Settings& s) {
  auto& p = s.propose;
  if (auto* tree = r.one("propose.tree"); tree && !tree->value.empty()) {
    p.tree = (s.workdir / tree->value).lexically_normal();
    if (!std::filesystem::is_directory(p.tree)) bad(*tree, "propose.tree", "is not a folder");
    try {
      p.tree_digest = digest_build_inputs(p.tree, {"."});
    } catch (const std::runtime_error& e) {
      bad(*tree, "propose.tree", fmt::format("cannot be read: {}", e.what()));
    }
  }
  auto* command = r.one("propose.command");
  if (!command || command->value.empty()) {
    for (const char* key : {"propose.timeout", "propose.when", "propose.max_per_round", "propose.budget",
                            "propose.parallel"})
      if (auto* raw = r.one(key); raw && raw->where != "default") bad(*raw, key, "needs [propose] command");
    return;
  }
  if (p.tree.empty()) bad(*command, "propose.command", "needs [propose] tree, the source tree patches are written against");
  try {
    const std::vector<std::string> known = {"context", "index", "out", "round", "seed"};
    for (const auto& name : jobs::placeholders(command->value))
      if (!std::binary_search(known.begin(), known.end(), name))
        throw jobs::CommandError(fmt::format("unknown placeholder {{{}}} (known: {})", name, fmt::join(known, ", ")));
    jobs::split_command(command->value);
  } catch (const jobs::CommandError& e) {
    throw ConfigError(fmt::format("{}: [propose] command: {}", command->where, e.what()));
  }
  p.command = command->value;
  p.timeout = r.duration("propose.timeout");
  auto* when = r.one("propose.when");
  if (when->value == "every_round") {
    p.when = Settings::Propose::When::every_round;
  } else if (when->value == "exhausted") {
    p.when = Settings::Propose::When::exhausted;
  } else if (when->value.starts_with("stall ")) {
    p.when = Settings::Propose::When::stall;
    const auto digits = std::string_view(when->value).substr(6);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), p.stall_rounds);
    if (ec != std::errc{} || end != digits.data() + digits.size() || p.stall_rounds < 1 || p.stall_rounds > 1000)
      bad(*when, "propose.when", "is not 'stall N' with N from 1 to 1000");
  } else {
    bad(*when, "propose.when", "is not every_round, exhausted or stall N");
  }
  p.max_per_round = static_cast<int>(r.integer("propose.max_per_round", 1, 1000));
  p.budget = static_cast<int>(r.integer("propose.budget", 1, 100'000));
  p.parallel = static_cast<int>(r.integer("propose.parallel", 1, 64));
}

// intent.objective = tests.passed / tests.GROUP (docs/propose.md): the objective is counted from
// the suite's outcomes, so there is nothing to explore, every candidate is evaluated, and there
// is no speed-up to confirm. Otherwise the explore command is required.
void read_tests_objective(Reader& r, Settings& s) {
  auto* explore = r.one("explore.command");
  if (!s.tests_objective()) {
    if (!explore || explore->value.empty())
      throw ConfigError(fmt::format("{}: [explore] command is required (or an objective counted from tests: "
                                    "intent.objective = tests.passed)",
                                    r.display()));
    return;
  }
  auto* objective = r.one("intent.objective");
  if (!objective) bad(*r.one("intent.objectives"), "intent.objectives", "cannot count tests: give intent.objective = tests.passed");
  const auto& protocol = suites::suite_protocol(s.suite);
  if (!protocol.has_tests())
    bad(*objective, "intent.objective", "counts tests: it needs [evaluate] suite (per-test outcomes, docs/tests.md)");
  const auto name = s.objective.substr(6);
  if (name == "passed" && protocol.per_file_checker && !s.suite_summary.empty()) {
    const auto groups = suites::SummaryPattern(s.suite_summary).names();
    if (std::find(groups.begin(), groups.end(), "passed") != groups.end())
      bad(*objective, "intent.objective",
          "counts the files that pass, but evaluate.summary has a group named passed too: rename the group");
  }
  if (name != "passed") {
    std::vector<std::string> groups;
    if (protocol.per_file_checker && !s.suite_summary.empty())
      groups = suites::SummaryPattern(s.suite_summary).names();
    if (std::find(groups.begin(), groups.end(), name) == groups.end())
      bad(*objective, "intent.objective",
          fmt::format("counts tests.passed or a group of evaluate.summary (known: {})",
                      groups.empty() ? std::string("none: suite = per_file with a summary pattern has groups")
                                     : fmt::format("{}", fmt::join(groups, ", "))));
  }
  if (explore && !explore->value.empty())
    bad(*explore, "explore.command", "is given with an objective counted from tests: leave [explore] out");
  s.repeats = 0;
  s.max_repeats = 0;
  s.confirm = false;
  s.gate.kind = Gate::Kind::all;
}

Settings validate(RawValues raw, const std::string& display) {
  // Names and commands end up in the results file, reports and JSON: all text is UTF-8 (the
  // file's lines are checked as they are read; these are the command line's).
  for (const auto& [key, values] : raw)
    for (const auto& v : values)
      if (!is_utf8(v.value)) {
        const auto dot = key.find('.');
        throw ConfigError(fmt::format("{}: [{}] {}: the value is not UTF-8", v.where, key.substr(0, dot),
                                      key.substr(dot + 1)));
      }
  Reader r(raw, display);
  Settings s;
  s.name = r.text("campaign.name");
  if (!s.name.empty() && !is_campaign_name(s.name))
    bad(*r.one("campaign.name"), "campaign.name",
        "may hold only letters, digits and . _ + -, and not start with . or - (it names job folders, Slurm jobs and "
        "files)");
  s.results = r.text("campaign.results");
  s.seed = static_cast<std::uint64_t>(r.integer("campaign.seed", 0, INT64_MAX));
  read_objectives(r, s);
  read_space(r, s);
  if (auto* baseline = r.one("intent.baseline")) {
    try {
      s.baseline = s.space.to_text(s.space.parse_configuration(baseline->value));
    } catch (const search::SpaceError& e) {
      throw ConfigError(fmt::format("{}: [intent] baseline: {}", baseline->where, e.what()));
    }
  }
  if (auto* target = r.one("intent.target")) {
    char* end = nullptr;
    double v = std::strtod(target->value.c_str(), &end);
    if (end == target->value.c_str() || *end != '\0' || !std::isfinite(v)) bad(*target, "intent.target", "is not a number");
    s.target = v;
  }
  auto* on_baseline_failure = r.one("intent.on_baseline_failure");
  if (on_baseline_failure->value != "stop" && on_baseline_failure->value != "continue")
    bad(*on_baseline_failure, "intent.on_baseline_failure", "is not stop or continue");
  s.stop_on_baseline_failure = on_baseline_failure->value == "stop";
  s.explore_command = r.text("explore.command");
  s.repeats = static_cast<int>(r.integer("explore.repeats", 1, 1000));
  if (auto* max_repeats = r.one("explore.max_repeats"); max_repeats->value == "auto") {
    s.max_repeats = 2 * s.repeats;
  } else {
    s.max_repeats = static_cast<int>(r.integer("explore.max_repeats", 1, 100'000));
    if (s.max_repeats < s.repeats)
      bad(*max_repeats, "explore.max_repeats", fmt::format("is fewer than explore.repeats ({})", s.repeats));
  }
  s.explore_timeout = r.duration("explore.timeout");
  s.explore_exclusive = r.boolean("explore.exclusive");
  // auto: one warm-up run when flotilla times the command (a first run pays for cold caches and
  // loading the program), none when the command measures itself.
  if (r.one("explore.warmup")->value == "auto") s.warmup = s.objective == jobs::kWallTimeMetric ? 1 : 0;
  else s.warmup = static_cast<int>(r.integer("explore.warmup", 0, 1000));
  s.confirm = r.boolean("confirm.enabled");
  s.confirm_confidence =
      r.real("confirm.confidence", 0.5, 0.9999, "is not a confidence level between 0.5 and 0.9999 (e.g. 0.95)");
  s.confirm_min_effect = r.real("confirm.min_effect", 0, 10, "is not a fraction from 0 to 10 (e.g. 0.02 for 2%)");
  s.confirm_max_pairs = static_cast<int>(r.integer("confirm.max_pairs", 1, 100'000));
  if (const int least = results::stats::min_pairs_for(s.confirm_confidence); s.confirm_max_pairs < least)
    bad(*r.one("confirm.max_pairs"), "confirm.max_pairs",
        fmt::format("is too few: at confidence {} a confirmation needs at least {} pairs to exclude anything",
                    s.confirm_confidence, least));
  s.confirm_tries = static_cast<int>(r.integer("confirm.tries", 1, 1000));
  s.confirm_head_to_head = r.boolean("confirm.head_to_head");
  s.evaluate_command = r.text("evaluate.command");
  {  // every backend's own settings, each read by its registry row, before what depends on them
    BackendSource source(r);
    s.backends = jobs::read_backend_configs(source);
  }
  s.shards = read_shards(r, s.backends.find(r.one("resources.backend")->value).get());
  s.evaluate_timeout = r.duration("evaluate.timeout");
  s.gate = read_gate(r);
  {
    auto* workdir = r.one("campaign.workdir");
    s.workdir = std::filesystem::absolute(workdir ? std::filesystem::path(workdir->value) : std::filesystem::current_path())
                    .lexically_normal();
    if (!s.workdir.has_filename()) s.workdir = s.workdir.parent_path();  // "dir/." is "dir/": no trailing '/'
    if (!std::filesystem::is_directory(s.workdir))
      bad(*workdir, "campaign.workdir", "is not a directory");
  }
  read_propose(r, s);
  // The build first: its {build_dir} is then known to every other command. A build names no
  // {candidate}, so candidates that differ only in what it does not name share one build.
  check_command(r, s, "build.command", {"build_dir"});
  s.build_command = r.text("build.command");
  s.build_timeout = r.duration("build.timeout");
  s.build_parallel = static_cast<unsigned>(r.integer("build.parallel", 0, 4096));
  s.build_root = r.text("build.dir");
  if (auto* dir = r.one("build.dir"); dir && s.build_command.empty())
    bad(*dir, "build.dir", "needs [build] command");
  s.build_env = read_env(r, s, "build.env", {});
  if (auto env = r.all("build.env"); !env.empty() && s.build_command.empty())
    bad(env.front(), "build.env", "needs [build] command");
  check_command(r, s, "explore.command", {"candidate", "repeat"});
  s.explore_env = read_env(r, s, "explore.env", {"candidate", "repeat"});
  s.evaluate_env = read_env(r, s, "evaluate.env", {"candidate", "shard", "shards"});
  if (auto* inputs = r.one("build.inputs"); inputs && !inputs->value.empty()) {
    if (s.build_command.empty()) bad(*inputs, "build.inputs", "needs [build] command");
    std::istringstream words(inputs->value);
    for (std::string word; words >> word;) s.build_inputs.push_back(word);
    try {
      s.build_inputs_digest = digest_build_inputs(s.workdir, s.build_inputs);
    } catch (const std::runtime_error& e) {
      bad(*inputs, "build.inputs", fmt::format("cannot be read: {}", e.what()));
    }
  }
  read_suite(r, s);
  read_tests_objective(r, s);
  read_stages(r, s);
  s.strategy = registered(r, "search.strategy", search::strategy_names());
  check_several_objectives(r, s);
  read_fidelity(r, s);
  if (const auto* warm = r.one("search.warm_start")) {
    s.warm_start = warm->value;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(s.warm_start, ec))
      bad(*warm, "search.warm_start", "is not a file (a finished campaign's results, OTHER.h5)");
    if (!search::uses_warm_start(s.strategy)) {
      std::vector<std::string_view> users;  // from the registry, so a new strategy is named too
      for (auto name : search::strategy_names())
        if (search::uses_warm_start(name)) users.push_back(name);
      const auto last = users.back();
      users.pop_back();
      bad(*warm, "search.warm_start",
          fmt::format("is ignored by search.strategy = {}: {} and {} use a warm start", s.strategy, fmt::join(users, ", "), last));
    }
  }
  s.budget = static_cast<std::size_t>(r.integer("search.budget", 0, 100'000'000));  // 0: the baseline alone
  if (s.budget == 0 && !s.baseline)
    bad(*r.one("search.budget"), "search.budget",
        "verifies the baseline alone, but [intent] baseline is not set: name the configuration to verify");
  s.batch = static_cast<std::size_t>(r.integer("search.batch", 1, 1'000'000));
  s.backend = registered(r, "resources.backend", jobs::backend_names());
  s.slots = static_cast<unsigned>(r.integer("resources.slots", 0, 4096));
  s.pin = r.boolean("resources.pin");
  s.ranks = static_cast<unsigned>(r.integer("resources.ranks", 0, 1'000'000));
  s.jobs_dir = r.text("resources.jobs_dir");
  s.max_attempts = static_cast<int>(r.integer("resources.max_attempts", 1, 100));
  {
    const auto* on = r.one("build.on");
    if (on->value != "auto" && on->value != "host" && on->value != "job") bad(*on, "build.on", "is not auto, host or job");
    // Builds as jobs of their own need a backend that runs tasks on other hosts (BackendCapabilities).
    const bool build_jobs = jobs::backend_capabilities(s.backend).build_jobs;
    if (on->value == "job" && !build_jobs)
      bad(*on, "build.on",
          fmt::format("= job needs resources.backend = {} (it is {})",
                      fmt::join(jobs::backends_with(&jobs::BackendCapabilities::build_jobs), " or "), s.backend));
    if (on->value != "auto" && s.build_command.empty()) bad(*on, "build.on", "needs [build] command");
    s.build_jobs = !s.build_command.empty() && (on->value == "job" || (on->value == "auto" && build_jobs));
  }
  return s;
}

std::string Settings::fidelity_full() const {
  for (const auto& p : space.parameters())
    if (p.name == fidelity) return p.format(p.grid_value(p.grid_size() - 1));
  return {};
}

std::string Settings::build_template() const {
  std::string text = build_command;
  for (const auto& [name, value] : build_env) text += fmt::format("\nenv {}={}", name, value);
  if (!build_inputs.empty()) text += fmt::format("\ninputs {}", build_inputs_digest);  // no placeholder: literal
  return text;
}

std::string Gate::text() const { return kind == Kind::all ? "all" : fmt::format("top {} per round", top); }

namespace {

// The keys fingerprint version 2 added: what a task computes also depends on where it runs and on
// its environment (a resumed campaign with another explore.env mixed scores of 500 with 1).
constexpr std::string_view kFingerprintVersion = "fingerprint = 2";
constexpr std::array<std::string_view, 4> kVersion2Keys = {"fingerprint", "campaign.workdir", "explore.env",
                                                           "evaluate.env"};

std::string env_lines(std::string_view section, const std::vector<std::pair<std::string, std::string>>& env) {
  std::string lines;
  for (const auto& [name, value] : env) lines += fmt::format("{}.env = {}={}\n", section, name, value);
  return lines;
}

// "key = value" lines by key, repeated keys (env lines) joined in order; lines without " = "
// (the space's) are keys of their own.
std::map<std::string, std::string> fingerprint_lines(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) {
      kv[line] += "";
      continue;
    }
    auto& value = kv[line.substr(0, eq)];
    value += (value.empty() ? "" : ", ") + line.substr(eq + 3);
  }
  return kv;
}

}  // namespace

std::optional<std::string> fingerprint_change(const std::string& recorded, const std::string& now) {
  auto a = fingerprint_lines(recorded), b = fingerprint_lines(now);
  if (!a.contains("fingerprint"))  // recorded before version 2
    for (auto key : kVersion2Keys) b.erase(std::string(key));
  if (a == b) return std::nullopt;
  std::vector<std::string> changes;
  for (const auto& [k, v] : a)
    if (!b.contains(k)) changes.push_back(fmt::format("'{}' was removed", k));
    else if (b[k] != v) changes.push_back(fmt::format("{} changed from '{}' to '{}'", k, v, b[k]));
  for (const auto& [k, v] : b)
    if (!a.contains(k)) changes.push_back(fmt::format("'{}{}' was added", k, v.empty() ? "" : " = " + v));
  return fmt::format("{}", fmt::join(changes, "; "));
}

std::string Settings::fingerprint() const {
  return std::string(kFingerprintVersion) + "\n" +
         fmt::format("campaign.workdir = {}\n", workdir.string()) + env_lines("explore", explore_env) +
         env_lines("evaluate", evaluate_env) + fmt::format(
      "intent.objective = {}\nintent.direction = {}\nintent.baseline = {}\n{}explore.command = {}\n"
      "explore.repeats = {}\nevaluate.command = {}\nevaluate.shards = {}\nevaluate.gate = {}\n",
      objective, maximize ? "maximize" : "minimize", baseline.value_or(""), space.fingerprint(), explore_command,
      repeats, evaluate_command, shards, gate.text()) +
         (fidelity.empty() ? std::string() : fmt::format("search.fidelity = {}\n", fidelity)) +
         // Only campaigns of several objectives name them, so other campaigns' files still resume.
         (objectives.empty() ? std::string()
                             : fmt::format("intent.objectives = {}\nintent.pick = {}\n",
                                           results::objectives_text(objectives), pick.text())) +
         // Only campaigns with a build stage name it, so other campaigns' files still resume.
         (build_command.empty() ? std::string() : fmt::format("build.command = {}\n", build_command)) +
         (propose.tree.empty() ? std::string()
                               : fmt::format("propose.tree = {} (content {})\n", propose.tree.string(), propose.tree_digest)) +
         (build_inputs.empty() ? std::string()
                               : fmt::format("build.inputs = {} (content {})\n", fmt::join(build_inputs, " "),
                                             build_inputs_digest)) +
         // The env lines are part of every build key: recorded builds of other env lines are not these.
         [&] {
           std::string lines;
           for (const auto& [name, value] : build_env) lines += fmt::format("build.env = {}={}\n", name, value);
           return lines;
         }() +
         // A confirmation's pairs stopped at this rule's looks: another rule would read them differently.
         (confirm ? fmt::format("confirm.confidence = {}\nconfirm.min_effect = {}\nconfirm.max_pairs = {}\n",
                                confirm_confidence, confirm_min_effect, confirm_max_pairs)
                  : std::string("confirm.enabled = false\n")) +
         // per_file's own settings only for its campaigns, so other campaigns' files still resume.
         (suites::suite_protocol(suite).per_file_checker
              ? fmt::format("evaluate.summary = {}\nevaluate.pass_when = {}\nevaluate.no_drop = {}\n", suite_summary,
                            suite_pass_when, fmt::join(suite_no_drop, " "))
              : std::string()) +
         (!suites::suite_protocol(suite).has_tests()
              ? std::string()
              : fmt::format("evaluate.suite = {}\nevaluate.files = {}\nevaluate.report = {}\nevaluate.require = {}\n"
                            "evaluate.rerun_failures = {}\n{}{}",
                            suites::to_string(suite), suite_files, suites::to_string(suite_report),
                            require == results::TestGate::all_pass ? "all_pass" : "no_regression", rerun_failures,
                            suite_list.empty() ? std::string() : fmt::format("evaluate.list = {}\n", suite_list),
                            suite_paths.empty() ? std::string() : fmt::format("evaluate.paths = {}\n", suite_paths)));
}

}  // namespace flotilla::scheduler
