// SuiteStage.cpp — per-test outcomes in the campaign's evaluate stage (SuiteStage.h).
#include "SuiteStage.h"

#include "Clock.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "flotilla/jobs/Command.h"
#include "flotilla/jobs/Subprocess.h"
#include "flotilla/scheduler/Planning.h"
#include "flotilla/suites/FilePatterns.h"
#include "flotilla/suites/PerFile.h"
#include "flotilla/suites/Protocols.h"
#include "flotilla/suites/Reports.h"

extern char** environ;

namespace flotilla::scheduler {
namespace {

// A test listing (gtest --gtest_list_tests, ctest --show-only, [evaluate] list) takes seconds;
// with no evaluate timeout set, ten minutes is a hang.
constexpr std::chrono::milliseconds kDiscoveryTimeout = std::chrono::minutes(10);

namespace fs = std::filesystem;

// `text` as a glob(3) pattern that matches only itself (a folder's name may hold '[' or '*').
std::string glob_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

using suites::Parsed;
using suites::ReportProblem;
using suites::problem;

Parsed<std::string> read_text(const fs::path& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return ReportProblem{fmt::format("{}: cannot read it: {}", path.string(),
                                     errno != 0 ? std::strerror(errno) : "open failed")};
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A file flotilla wrote itself (a shard's selection, files.txt) that cannot be read now: the
// folder was tampered with, not a report to judge. An error that stops the run, naming it.
std::string read_own(const fs::path& path) {
  auto text = read_text(path);
  if (const auto* p = problem(text)) throw std::runtime_error(p->message);
  return std::move(std::get<std::string>(text));
}

// The file's text, or "" when it cannot be read: for output quoted in a message, never an error.
std::string read_text_if_any(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return in ? std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) : std::string();
}

// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half of it.
void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error(fmt::format("{}: cannot write: {}", tmp.string(), std::strerror(errno)));
  }
  fs::rename(tmp, path);
}

// The listing command, its output to files, bounded by the evaluate timeout (discovery's own
// default when that is 0: a listing that hangs must not hang the campaign). Returns its exit
// status, -1 when it timed out; the reason when it cannot start.
Parsed<int> run_to_files(std::vector<std::string> argv, const fs::path& out, const fs::path& err,
                 std::chrono::milliseconds timeout, const std::vector<fs::path>& path_prepend, const fs::path& workdir) {
  using Output = jobs::SubprocessSpec::Output;
  const auto result = jobs::run_subprocess({.argv = std::move(argv),
                                            .workdir = workdir,
                                            .timeout = timeout.count() > 0 ? timeout : kDiscoveryTimeout,
                                            .stdout_to = Output::file,
                                            .stderr_to = Output::file,
                                            .stdout_file = out,
                                            .stderr_file = err,
                                            .path_prepend = path_prepend});
  if (!result.started) return ReportProblem{result.error};
  return result.timed_out ? -1 : result.exit_code;
}

std::vector<std::string> suites_split_lines(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '\n' || text[i] == '\r') parts.push_back(text.substr(begin, i - begin)), begin = i + 1;
  return parts;
}

// [evaluate] list's output: one test name a line; blank lines ignored, a name twice an error.
Parsed<std::vector<std::string>> parse_listing(const std::string& text, const std::string& source) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty()) continue;
    if (!seen.insert(line).second)
      return ReportProblem{fmt::format("{}:{}: test '{}' listed twice", source, number, line)};
    names.push_back(std::move(line));
  }
  return names;
}

std::string first_line(const std::string& text) {
  auto end = text.find('\n');
  return text.substr(0, end == std::string::npos ? text.size() : end);
}

bool has_metric(const results::TrialRecord& t, std::string_view name) {
  return std::any_of(t.metrics.begin(), t.metrics.end(), [&](const auto& m) { return m.name == name; });
}

// The latest attempt of each evaluate index of one candidate.
std::map<int, const results::TrialRecord*> latest_evaluations(std::int64_t candidate,
                                                              const SuiteStage::CandidateTrials& trials) {
  std::map<int, const results::TrialRecord*> latest;
  for (const auto* t : trials) {
    if (t->candidate != candidate || t->kind != results::TrialKind::evaluate) continue;
    auto& slot = latest[t->index];
    if (!slot || t->attempt >= slot->attempt) slot = t;
  }
  return latest;
}

}  // namespace

fs::path SuiteStage::candidate_dir(std::int64_t candidate) const {
  return fs::absolute(m_s.tests_dir / fmt::format("candidate-{}", candidate));
}

// The format of a report, as the suite's protocol says (suites/Protocols.h): gtest's JSON, JUnit
// XML (ctest --output-junit too), TAP, flotilla-per-file's JSON, or evaluate.report's choice.
const suites::ReportFormat& SuiteStage::report_format() const {
  const auto& protocol = suites::suite_protocol(m_s.suite);
  return protocol.report_chosen ? suites::suite_protocol(m_s.suite_report).report : protocol.report;
}

// One report per attempt: a task made again (on resume, or when a job's results are taken from
// its results file) never removes or overwrites the report another attempt wrote.
fs::path SuiteStage::report_path(std::int64_t candidate, int index, int attempt) const {
  const std::string_view ext = report_format().extension;
  if (index == rerun_index()) return candidate_dir(candidate) / fmt::format("rerun.a{}.{}", attempt, ext);
  return candidate_dir(candidate) / fmt::format("shard-{}.a{}.{}", index, attempt, ext);
}

// ctest selects tests by number from a file: "0,0,0,N,N,..." (no range, then the numbers).
// evaluate.files, expanded once, sorted, without duplicates, as absolute paths (jobs may run in
// another directory): glob(3) patterns, recursive `**` patterns and @LIST files
// (suites/FilePatterns.h). A pattern or list that gives no file is an error naming it.
std::vector<std::string> SuiteStage::test_files() {
  if (m_files) return *m_files;
  const std::string config = m_s.config_path.filename().string();
  // Relative patterns, list files and their entries mean the campaign's working folder, as
  // relative paths in its commands do (campaign.workdir: where flotilla started unless set).
  const fs::path& here = m_s.workdir;
  const auto in_workdir = [&](const fs::path& p) { return p.is_absolute() ? p : here / p; };
  const auto nothing = [&](const std::string& what) {
    return ConfigError(fmt::format("{}: [evaluate] files: {} matches no file (relative to {})", config, what,
                                   here.string()));
  };
  std::set<std::string> files;
  for (const auto& pattern : suites::split_file_patterns(m_s.suite_files)) {
    std::size_t before = files.size();
    if (pattern.starts_with('@')) {
      const fs::path list = pattern.substr(1);
      // A FIFO (a shell's <(find ...)) is read once, like a file; anything else is named as it is.
      std::error_code ec;
      const auto type = fs::status(in_workdir(list), ec).type();
      if (type != fs::file_type::regular && type != fs::file_type::fifo)
        throw ConfigError(fmt::format("{}: [evaluate] files: list file '{}' {} (relative to {})", config, list.string(),
                                      type == fs::file_type::not_found || ec ? "does not exist"
                                                                             : "is not a file or a FIFO (a folder?)",
                                      here.string()));
      auto text = read_text(in_workdir(list));
      if (const auto* p = problem(text))
        throw ConfigError(fmt::format("{}: [evaluate] files: list file {}", config, p->message));
      const auto entries = suites::parse_file_list(std::get<std::string>(text));
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!fs::is_regular_file(in_workdir(entries[i])))
          throw ConfigError(fmt::format("{}: [evaluate] files: {}: '{}' is not a file (relative to {})", config,
                                        list.string(), entries[i], here.string()));
        files.insert(in_workdir(entries[i]).lexically_normal().string());
      }
      if (entries.empty()) throw nothing("list '" + list.string() + "' (empty)");
      continue;
    }
    if (pattern.find("**") != std::string::npos) {
      const fs::path root = in_workdir(suites::literal_root(pattern));
      std::error_code ec;
      // Symlinked folders are followed (as glob(3) follows them), each real folder once, so a
      // link back up the tree cannot loop; a matching name that is a dangling link is an error.
      std::set<std::pair<dev_t, ino_t>> seen;
      const auto first_visit = [&](const fs::path& dir) {
        struct stat info {};
        return ::stat(dir.c_str(), &info) == 0 && seen.insert({info.st_dev, info.st_ino}).second;
      };
      first_visit(root);
      for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied |
                                                         fs::directory_options::follow_directory_symlink, ec), end;
           !ec && it != end; it.increment(ec)) {
        std::error_code type_error;
        if (it->is_directory(type_error)) {
          if (!first_visit(it->path())) it.disable_recursion_pending();
          continue;
        }
        // Matched as the pattern was written: relative to the working folder, or absolute.
        const fs::path shown = pattern.starts_with('/') ? it->path() : it->path().lexically_relative(here).lexically_normal();
        if (!suites::matches_path_pattern(pattern, shown.string())) continue;
        if (it->is_symlink(type_error) && !fs::exists(it->path(), type_error))
          throw ConfigError(fmt::format("{}: [evaluate] files: '{}' matches '{}', a link to nothing (it points to "
                                        "'{}')", config, pattern, shown.string(),
                                        fs::read_symlink(it->path(), type_error).string()));
        if (it->is_regular_file(type_error)) files.insert(it->path().lexically_normal().string());
      }
      if (ec)
        throw ConfigError(fmt::format("{}: [evaluate] files: '{}': cannot walk {}: {}", config, pattern,
                                      root.string(), ec.message()));
    } else {
      glob_t found{};
      const std::string absolute = pattern.starts_with('/') ? pattern : glob_escape(here.string()) + "/" + pattern;
      const int rc = ::glob(absolute.c_str(), 0, nullptr, &found);
      for (std::size_t i = 0; rc == 0 && i < found.gl_pathc; ++i)
        if (fs::is_regular_file(found.gl_pathv[i])) files.insert(fs::path(found.gl_pathv[i]).lexically_normal().string());
      globfree(&found);
    }
    if (files.size() == before) throw nothing("'" + pattern + "'");
  }
  if (files.empty()) throw nothing("'" + m_s.suite_files + "'");
  // A shard's list holds one file a line: a name with a newline would become two entries.
  for (const auto& file : files)
    if (file.find_first_of("\n\r") != std::string::npos)
      throw ConfigError(fmt::format("{}: [evaluate] files: '{}' matches a file whose name holds a line break ('{}'): "
                                    "a shard's list holds one file a line; rename it or narrow the pattern",
                                    config, m_s.suite_files, fmt::join(suites_split_lines(file), "\\n")));
  m_files = std::vector<std::string>(files.begin(), files.end());
  return *m_files;
}

// The candidate's test files: the glob as it matched when the candidate's first shard was made,
// kept (files.txt), so a shard made again on resume gets the files it had even if the corpus
// has changed since.
std::vector<std::string> SuiteStage::candidate_files(std::int64_t candidate) {
  const fs::path path = candidate_dir(candidate) / "files.txt";
  if (fs::exists(path)) {
    std::istringstream in(read_own(path));
    std::vector<std::string> files;
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) files.push_back(line);
    return files;
  }
  const auto files = test_files();
  std::string text;
  for (const auto& f : files) text += f + "\n";
  write_atomically(path, text);
  m_fresh_files.insert(candidate);  // its division is decided now, balanced (file_assignment)
  return files;
}

// The shard of each of the candidate's files: balanced by the reference's recorded durations
// (per_file records each file as a test; a files suite's cases are summed per file), by count
// without them. Decided with files.txt and kept (assignment.txt); a candidate whose files.txt
// was written before flotilla balanced files has no assignment.txt and keeps round-robin.
Parsed<std::vector<std::int32_t>> SuiteStage::file_assignment(std::int64_t candidate,
                                                              const std::vector<std::string>& files) {
  const fs::path path = candidate_dir(candidate) / "assignment.txt";
  if (fs::exists(path)) return read_assignment(path, files.size());
  if (m_fresh_files.count(candidate) == 0) return suites::assign_shards({}, files.size(), m_s.shards);
  const fs::path& here = m_s.workdir;
  std::vector<std::string> shown;
  for (const auto& f : files) shown.push_back(fs::path(f).lexically_relative(here).string());
  return write_assignment(path, suites::assign_shards(reference_seconds(candidate, shown, true), files.size(), m_s.shards));
}

// The files of one shard, as assemble() checks them: each by its path relative to the working
// folder (how it is shown) and the absolute path the shard's list gave the command.
Parsed<std::vector<std::vector<std::string>>> SuiteStage::shard_files(std::int64_t candidate, int shard) {
  const auto files = candidate_files(candidate);
  const auto assignment = file_assignment(candidate, files);
  if (const auto* p = problem(assignment)) return *p;
  const fs::path& here = m_s.workdir;
  std::vector<std::vector<std::string>> out;
  for (auto i : suites::tests_of_shard(std::get<0>(assignment), shard)) {
    const std::string& absolute = files[static_cast<std::size_t>(i)];
    const std::string relative = fs::path(absolute).lexically_relative(here).string();
    out.push_back(relative.empty() || relative == absolute ? std::vector<std::string>{absolute}
                                                           : std::vector<std::string>{relative, absolute});
  }
  return out;
}

void SuiteStage::record_shard_sizes(std::int64_t candidate, const std::vector<std::int32_t>& assignment) {
  for (int shard = 0; shard < m_s.shards; ++shard) m_shard_sizes[{candidate, shard}] = 0;
  for (auto shard : assignment) ++m_shard_sizes[{candidate, shard}];
}

// A per_file shard attempt's temporary folders ({tmpdir}) live here, removed when its task ends.
fs::path SuiteStage::temporary_dir(std::int64_t candidate, int shard, int attempt) const {
  return candidate_dir(candidate) / fmt::format("shard-{}.a{}.tmp", shard, attempt);
}

void SuiteStage::task_ended(std::uint64_t task_id, int attempt) const {
  if (!protocol().per_file_checker) return;
  const auto key = decode_task_id(task_id);
  if (key.kind != results::TrialKind::evaluate || key.index >= m_s.shards) return;
  std::error_code ignored;  // usually gone already: flotilla-per-file removes it unless it was killed
  fs::remove_all(temporary_dir(key.candidate, key.index, attempt), ignored);
}

void SuiteStage::remove_stale_temporaries() const {
  if (!protocol().per_file_checker || !fs::is_directory(m_s.tests_dir)) return;
  std::error_code ec;
  for (const auto& candidate : fs::directory_iterator(m_s.tests_dir, ec)) {
    if (!candidate.is_directory() || !candidate.path().filename().string().starts_with("candidate-")) continue;
    for (const auto& entry : fs::directory_iterator(candidate.path(), ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_directory() && name.starts_with("shard-") && name.ends_with(".tmp")) fs::remove_all(entry.path(), ec);
    }
  }
}

const suites::SuiteProtocol& SuiteStage::protocol() const { return suites::suite_protocol(m_s.suite); }

bool SuiteStage::file_suite() const { return protocol().file_list; }

// ctest, lit, pytest: flotilla divides the discovered tests and gives each shard its own.
bool SuiteStage::flotilla_selects() const {
  return protocol().selection.sharding == suites::Selection::Sharding::flotilla;
}

void SuiteStage::prepare() {
  if (file_suite()) (void)test_files();  // a glob that matches nothing is an error now
  for (const auto& path : suites::split_file_patterns(m_s.suite_paths))  // lit, pytest: found where the tasks run
    if (!fs::exists(m_s.workdir / path))
      throw ConfigError(fmt::format("{}: [evaluate] paths: '{}' does not exist (relative to {})",
                                    m_s.config_path.filename().string(), path, m_s.workdir.string()));
}

void SuiteStage::add_shard_values(Values& values, std::int64_t candidate, int shard, int attempt) {
  fs::create_directories(candidate_dir(candidate));
  values["report"] = report_path(candidate, shard, attempt).string();
  if (flotilla_selects()) {
    // The shard's tests come from the discovery, so it runs before the shards (on this host).
    // A discovery that fails fails the shard with its reason, so the candidate is rolled back.
    const auto names = discovery(candidate, jobs::render_argv(m_s.evaluate_command, values));
    const auto* failed = problem(names);
    if (!failed) {
      const auto assignment = selected_assignment(candidate, **std::get_if<0>(&names));  // writes every shard's selection the first time
      failed = problem(assignment);
    }
    if (failed) m_discovery_error[candidate] = failed->message;
    else m_discovery_error.erase(candidate);
    return;
  }
  if (!file_suite()) return;
  const auto files = candidate_files(candidate);
  const auto assignment = file_assignment(candidate, files);
  if (const auto* p = problem(assignment)) throw std::runtime_error(p->message);  // assignment.txt, ours
  std::string list;
  const auto mine = suites::tests_of_shard(std::get<0>(assignment), shard);
  for (auto i : mine) list += files[static_cast<std::size_t>(i)] + "\n";
  const fs::path list_path = candidate_dir(candidate) / fmt::format("shard-{}.files", shard);
  write_atomically(list_path, list);
  values["files"] = list_path.string();
  if (!protocol().per_file_checker) return;
  m_shard_sizes[{candidate, shard}] = static_cast<std::int64_t>(mine.size());  // for the task's time limit
  // flotilla-per-file puts each file in: the command keeps its {file} and {tmpdir} words.
  values["file"] = "{file}";
  values["tmpdir"] = "{tmpdir}";
}

// per_file: the shard is one flotilla-per-file task over its list, the rendered command after
// `--`. Each file gets the evaluate timeout; the task as a whole the time its files take one
// after another at the given parallelism (all of them, when it is the shard's CPUs, unknown
// here), and a minute to spare.
void SuiteStage::wrap_per_file_task(jobs::TaskSpec& spec, std::int64_t candidate, int shard, int attempt) const {
  std::vector<std::string> argv = {"flotilla-per-file",
                                   "--files", (candidate_dir(candidate) / fmt::format("shard-{}.files", shard)).string(),
                                   "--report", report_path(candidate, shard, attempt).string(),
                                   "--relative-to", m_s.workdir.string(),
                                   "--parallel", std::to_string(m_s.suite_parallel),
                                   "--timeout", std::to_string(m_s.evaluate_timeout.count()),
                                   "--tmp", temporary_dir(candidate, shard, attempt).string()};
  if (!m_s.suite_summary.empty()) argv.insert(argv.end(), {"--summary", m_s.suite_summary});
  if (!m_s.suite_pass_when.empty()) argv.insert(argv.end(), {"--pass-when", m_s.suite_pass_when});
  argv.push_back("--");
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  spec.argv = std::move(argv);
  const auto files = m_shard_sizes.count({candidate, shard}) ? m_shard_sizes.at({candidate, shard}) : 1;
  const auto rounds = m_s.suite_parallel > 0 ? (files + m_s.suite_parallel - 1) / m_s.suite_parallel : files;
  spec.timeout = m_s.evaluate_timeout.count() > 0 ? m_s.evaluate_timeout * std::max<std::int64_t>(rounds, 1) +
                                                        std::chrono::minutes(1)
                                                  : std::chrono::milliseconds(0);
}

void SuiteStage::finish_shard_task(jobs::TaskSpec& spec, std::int64_t candidate, int shard, int attempt) const {
  if (protocol().per_file_checker) return wrap_per_file_task(spec, candidate, shard, attempt);
  const fs::path report = report_path(candidate, shard, attempt);
  if (flotilla_selects()) {
    if (auto error = m_discovery_error.find(candidate); error != m_discovery_error.end()) {
      spec.argv = {"false"};  // judge() gives the shard the discovery error as its reason
      return;
    }
    if (auto tests = m_shard_sizes.find({candidate, shard}); tests != m_shard_sizes.end() && tests->second == 0) {
      // More shards than tests: a runner given no test would run them all (ctest -I with no
      // numbers, lit or pytest without paths), so this shard reports an empty suite instead:
      // written here, and the task only succeeds.
      write_atomically(report, std::string(report_format().empty));
      spec.argv = {"true"};
      return;
    }
  }
  const auto& selection = protocol().selection;
  add_selection(spec.argv, selection.shard_arguments, report,
                candidate_dir(candidate) / fmt::format("shard-{}.{}", shard, selection.shard_extension));
  if (selection.sharding != suites::Selection::Sharding::runner) return;
  spec.env.emplace_back(selection.total_env, std::to_string(m_s.shards));
  spec.env.emplace_back(selection.index_env, std::to_string(shard));
}

// Parsed when needed and not kept: a suite of millions of tests is parsed once when its shard
// reports (to judge it) and once for the verdict, and held in memory only meanwhile.
// With the discovery, reported names are mapped back to the listed ones where the report derives
// its own (pytest's JUnit classname.name: suites::rename_reported).
Parsed<std::vector<suites::TestResult>> SuiteStage::report(
    std::int64_t candidate, int index, int attempt, const std::optional<std::vector<std::string>>& discovered) const {
  const fs::path path = report_path(candidate, index, attempt);
  const auto text = read_text(path);
  if (const auto* p = problem(text)) return *p;
  return suites::parsed([&] {
    auto results = report_format().parse(std::get<std::string>(text), path.string());
    if (const auto rename = protocol().discovery.report_name; rename && discovered)
      suites::rename_reported(results, *discovered, rename, path.string());
    return results;
  });
}

void SuiteStage::judge(results::TrialRecord& trial) {
  if (!active() || trial.kind != results::TrialKind::evaluate) return;
  if (trial.index >= m_s.shards && trial.index != rerun_index()) return;
  if (auto error = m_discovery_error.find(trial.candidate); error != m_discovery_error.end()) {
    trial.status = results::TrialStatus::failed;  // its task was `false`: no test could be given to it
    trial.reason = error->second;
    return;
  }
  const auto reported = report(trial.candidate, trial.index, trial.attempt);
  if (const auto* p = problem(reported)) {
    if (trial.status == results::TrialStatus::ok) trial.status = results::TrialStatus::failed;
    trial.reason = fmt::format("{}{}no readable report: {}", trial.reason, trial.reason.empty() ? "" : "; ", p->message);
    return;
  }
  const auto& tests = std::get<0>(reported);
  const auto failed = std::count_if(tests.begin(), tests.end(),
                                    [](const auto& t) { return results::is_failure(t.outcome); });
  if (trial.status == results::TrialStatus::timeout) trial.metrics.push_back({"timed_out", 1});
  trial.metrics.push_back({"tests_reported", static_cast<double>(tests.size())});
  trial.metrics.push_back({"tests_failed", static_cast<double>(failed)});
  trial.status = results::TrialStatus::ok;  // the tests' outcomes go to the gate
  trial.reason.clear();
}

bool SuiteStage::awaits_verdict(std::int64_t candidate, const CandidateTrials& trials) const {
  const auto latest = latest_evaluations(candidate, trials);
  if (latest.contains(verdict_index())) return false;
  for (int shard = 0; shard < m_s.shards; ++shard) {
    auto it = latest.find(shard);
    if (it == latest.end() || it->second->status != results::TrialStatus::ok) return false;
  }
  return true;
}

// The recorded outcomes whose durations balance a candidate's shards: the baseline's, or else
// the latest candidate recorded before it (the last one tested, verified or not: its durations
// are as good a guess).
std::optional<results::CandidateTests> SuiteStage::reference_record(std::int64_t candidate) const {
  if (!m_store) return std::nullopt;
  if (m_reference && *m_reference != candidate)
    if (auto recorded = m_store->test_results(*m_reference); recorded && !recorded->durations.empty()) return recorded;
  const auto tested = m_store->tested_candidates();
  for (auto it = tested.rbegin(); it != tested.rend(); ++it)
    if (*it != candidate)
      if (auto recorded = m_store->test_results(*it); recorded && !recorded->durations.empty()) return recorded;
  return std::nullopt;
}

// The reference's recorded durations for `names`, for balancing shards; empty when unknown. With
// `by_file`, each name is a file and takes the sum of the tests named by it (its path, or its
// path then ':', ' ', '#', '(' or '[', as assembly matches files).
std::vector<double> SuiteStage::reference_seconds(std::int64_t candidate, const std::vector<std::string>& names,
                                                  bool by_file) const {
  const auto recorded = reference_record(candidate);
  if (!recorded) return {};
  const auto suite = m_store->test_suite(recorded->suite);
  std::map<std::string_view, double> by_name;
  for (std::size_t i = 0; i < suite.names.size() && i < recorded->durations.size(); ++i)
    if (recorded->durations[i] != 0) by_name.emplace(suite.names[i], results::duration_seconds(recorded->durations[i]));
  std::vector<double> seconds(names.size(), std::nan(""));
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!by_file) {
      if (auto it = by_name.find(names[i]); it != by_name.end()) seconds[i] = it->second;
      continue;
    }
    double sum = 0;
    bool any = false;
    for (auto it = by_name.lower_bound(names[i]); it != by_name.end() && it->first.starts_with(names[i]); ++it) {
      const std::string_view rest = it->first.substr(names[i].size());
      if (rest.empty() || std::string_view(": #([").find(rest[0]) != std::string_view::npos) sum += it->second, any = true;
    }
    if (any) seconds[i] = sum;
  }
  return seconds;
}

// ctest, lit, pytest: the shard of each discovered test, balanced by the reference's recorded
// durations when it has them (longest first), by count otherwise. Decided once per candidate
// and kept on disk (assignment.txt, and the selection of every shard: ctest's -I numbers, the
// others' selectors), so a shard made again on resume or as a later attempt gets exactly the
// tests it had.
Parsed<std::vector<std::int32_t>> SuiteStage::selected_assignment(std::int64_t candidate,
                                                                  const std::vector<std::string>& names) {
  const fs::path path = candidate_dir(candidate) / "assignment.txt";
  if (fs::exists(path)) {
    auto assignment = read_assignment(path, names.size());
    if (const auto* kept = std::get_if<0>(&assignment)) record_shard_sizes(candidate, *kept);
    return assignment;
  }
  const auto selectors = test_selectors(candidate, names);
  if (const auto* p = problem(selectors)) return *p;
  const auto assignment = suites::assign_shards(reference_seconds(candidate, names, false), names.size(), m_s.shards);
  record_shard_sizes(candidate, assignment);
  const auto& selection = protocol().selection;
  for (int shard = 0; shard < m_s.shards; ++shard)
    write_atomically(candidate_dir(candidate) / fmt::format("shard-{}.{}", shard, selection.shard_extension),
                     selection.shard_text(std::get<0>(selectors), suites::tests_of_shard(assignment, shard)));
  return write_assignment(path, assignment);  // last: its presence means every selection is written
}

Parsed<std::vector<std::int32_t>> SuiteStage::read_assignment(const fs::path& path, std::size_t tests) const {
  const auto text = read_text(path);
  if (const auto* p = problem(text)) return *p;
  std::vector<std::int32_t> assignment;
  std::istringstream in(std::get<std::string>(text));
  for (std::int32_t shard = 0; in >> shard;) assignment.push_back(shard);
  if (assignment.size() != tests)
    return ReportProblem{fmt::format("{}: {} shards for {} tests", path.string(), assignment.size(), tests)};
  return assignment;
}

std::vector<std::int32_t> SuiteStage::write_assignment(const fs::path& path, std::vector<std::int32_t> assignment) const {
  std::string text;
  for (auto shard : assignment) text += fmt::format("{}\n", shard);
  write_atomically(path, text);
  return assignment;
}

// What selects each discovered test on the runner's command line (lit: its path, from the
// kept listing; pytest: the node id, its name), one a line in a shard's or the re-run's file.
// A selector with a line break could not be one line: refused, naming it.
Parsed<std::vector<std::string>> SuiteStage::test_selectors(std::int64_t candidate,
                                                            const std::vector<std::string>& names) const {
  const auto& discovery = protocol().discovery;
  const fs::path listing = candidate_dir(candidate) / "discovery.txt";
  Parsed<std::vector<std::string>> selectors = names;
  if (discovery.selectors) {
    const auto text = read_text(listing);
    if (const auto* p = problem(text)) return *p;
    selectors = suites::parsed([&] { return discovery.selectors(std::get<std::string>(text), listing.string()); });
    if (problem(selectors)) return selectors;
  }
  for (const auto& s : std::get<0>(selectors))
    if (s.find_first_of("\n\r") != std::string::npos)
      return ReportProblem{fmt::format("{}: test '{}' holds a line break: it cannot be given to a shard",
                                       listing.string(), fmt::join(suites_split_lines(s), "\\n"))};
  return selectors;
}

// The protocol's words for a shard or the re-run (Selection): the report's path, the selection
// file `file`, or (pytest) each of its lines as an argument.
void SuiteStage::add_selection(std::vector<std::string>& argv, const std::vector<std::string_view>& arguments,
                               const fs::path& report, const fs::path& file) const {
  const bool reads_file = std::find(arguments.begin(), arguments.end(), "{selectors}") != arguments.end();
  for (auto& word : suites::selection_arguments(arguments, report.string(), file.string(),
                                                reads_file ? read_own(file) : std::string()))
    argv.push_back(std::move(word));
}

Parsed<std::optional<std::vector<std::string>>> SuiteStage::discovery(std::int64_t candidate,
                                                                    const std::vector<std::string>& argv) {
  const auto& protocol = suites::suite_protocol(m_s.suite);
  const bool listed = protocol.self_sharded && m_s.suite_list != "none" && !m_s.suite_list.empty();
  if (!protocol.discovery.parse && !listed) return std::optional<std::vector<std::string>>();
  if (auto known = m_discovered.find(candidate); known != m_discovered.end())
    return std::optional<std::vector<std::string>>(known->second);
  auto list_argv = argv;
  if (listed) {
    list_argv = jobs::render_argv(m_s.suite_list, m_list_values(candidate));
  } else {
    list_argv.insert(list_argv.end(), protocol.discovery.arguments.begin(), protocol.discovery.arguments.end());
    if (protocol.discovery.paths)
      for (const auto& path : suites::split_file_patterns(m_s.suite_paths)) list_argv.push_back(path);
  }
  const fs::path listing = candidate_dir(candidate) / "discovery.txt";
  if (!fs::exists(listing)) {  // once per candidate; a resumed campaign reads the recorded listing
    fs::create_directories(candidate_dir(candidate));
    const fs::path out = listing.string() + ".tmp", err = listing.string() + ".err";
    // In the campaign's workdir, where its shards run: relative paths mean the same to both.
    const auto ran = run_to_files(list_argv, out, err, m_s.evaluate_timeout, m_path_prepend, m_s.workdir);
    if (const auto* p = problem(ran)) return *p;
    if (const int status = std::get<int>(ran); status != 0) {
      // Why: stderr's first line, or, for a runner that reports on stdout (pytest's collection
      // errors), its stdout's first "ERROR" line, else its last line.
      // Either file may be missing (the command could not write it): then nothing is quoted.
      std::string why = first_line(read_text_if_any(err));
      fs::path shown = err;
      if (why.empty()) {
        shown = out;
        for (const auto& line : suites_split_lines(read_text_if_any(out)))
          if (!line.empty() && (why.empty() || !why.starts_with("ERROR"))) why = line;
      }
      return ReportProblem{fmt::format("candidate {}: test {} '{}' {}{}{} ({}: {})", candidate,
                                       listed ? "listing ([evaluate] list)" : "discovery", fmt::join(list_argv, " "),
                                       status < 0 ? "timed out" : fmt::format("ended with exit code {}", status),
                                       why.empty() ? "" : ": ", why, shown == err ? "stderr" : "output",
                                       shown.string())};
    }
    fs::rename(out, listing);
  }
  const auto text = read_text(listing);
  if (const auto* p = problem(text)) return *p;
  auto names = listed ? parse_listing(std::get<std::string>(text), listing.string())
                      : suites::parsed([&] { return protocol.discovery.parse(std::get<std::string>(text), listing.string()); });
  if (const auto* p = problem(names)) return *p;
  // Kept for the candidate's shards (ctest divides them by it), until its verdict.
  return std::optional<std::vector<std::string>>(
      m_discovered.insert_or_assign(candidate, std::move(std::get<0>(names))).first->second);
}

Parsed<suites::Assembled> SuiteStage::assemble(std::int64_t candidate, const std::vector<std::string>& argv,
                                               const CandidateTrials& trials) {
  const auto latest = latest_evaluations(candidate, trials);
  const auto listed = discovery(candidate, argv);
  if (const auto* p = problem(listed)) return *p;
  const auto& discovered = std::get<0>(listed);
  std::vector<std::int32_t> assignment;  // empty for a listing: its command shards itself
  if (const auto divide = protocol().selection.runner_assignment; discovered && divide)
    assignment = divide(*discovered, m_s.shards);
  if (discovered && flotilla_selects()) {
    auto selected = selected_assignment(candidate, *discovered);
    if (const auto* p = problem(selected)) return *p;
    assignment = std::move(std::get<0>(selected));
  }
  std::vector<suites::ShardRun> runs;
  for (int shard = 0; shard < m_s.shards; ++shard) {
    const results::TrialRecord& t = *latest.at(shard);
    auto reported = report(candidate, shard, t.attempt, discovered);
    if (const auto* p = problem(reported)) return *p;
    suites::ShardRun run{.shard = shard, .results = std::move(std::get<0>(reported)),
                         .timed_out = has_metric(t, "timed_out")};
    if (discovered && !assignment.empty()) run.given = suites::tests_of_shard(assignment, shard);
    if (file_suite()) {
      auto files = shard_files(candidate, shard);
      if (const auto* p = problem(files)) return *p;
      run.files = std::move(std::get<0>(files));
    }
    if (t.exit_code != 0) run.ended = fmt::format("exit code {}", t.exit_code);
    runs.push_back(std::move(run));
  }
  auto assembled = suites::parsed([&] { return suites::assemble(discovered, runs); });
  if (problem(assembled)) return assembled;
  auto& whole = std::get<0>(assembled);
  if (auto rerun = latest.find(rerun_index()); rerun != latest.end()) {
    Parsed<std::vector<suites::TestResult>> rerun_results = std::vector<suites::TestResult>{};
    if (rerun->second->status == results::TrialStatus::ok)
      rerun_results = report(candidate, rerun_index(), rerun->second->attempt, discovered);
    if (const auto* p = problem(rerun_results)) return *p;
    const auto applied = suites::parsed([&] {
      suites::apply_rerun(whole, suites::failures_to_rerun(whole), std::get<0>(rerun_results),
                          has_metric(*rerun->second, "timed_out"));
      return true;
    });
    if (const auto* p = problem(applied)) return *p;
  }
  return assembled;
}

std::optional<jobs::TaskSpec> SuiteStage::rerun_task(std::int64_t candidate, std::vector<std::string> argv,
                                                     const CandidateTrials& trials, int attempt) {
  const auto& selection = protocol().selection;
  if (!protocol().reruns || !m_s.rerun_failures) return std::nullopt;
  const fs::path selection_file = candidate_dir(candidate) / fmt::format("rerun.{}", selection.rerun_extension);
  if (latest_evaluations(candidate, trials).contains(rerun_index())) return std::nullopt;
  // A report that cannot be assembled makes no re-run: the verdict reports it.
  const auto assembled = assemble(candidate, argv, trials);
  if (problem(assembled)) return std::nullopt;
  const auto failures = suites::failures_to_rerun(std::get<0>(assembled));
  if (failures.empty()) return std::nullopt;
  const auto selectors = test_selectors(candidate, std::get<0>(assembled).suite.names);
  if (problem(selectors)) return std::nullopt;
  write_atomically(selection_file, selection.rerun_text(std::get<0>(selectors), failures));
  const fs::path report = report_path(candidate, rerun_index(), attempt);
  add_selection(argv, selection.rerun_arguments, report, selection_file);
  return jobs::TaskSpec{.id = encode_task_id({candidate, results::TrialKind::evaluate, rerun_index()}),
                        .argv = std::move(argv),
                        .timeout = m_s.evaluate_timeout,
                        .attempt = attempt,
                        .resources = "evaluate"};
}

// The first tests a failed gate names, as "name (outcome)": the failing ones (all_pass), or the
// regressions then the tests the candidate dropped (no_regression). Names are read only here,
// for a gate that failed.
results::GateNames SuiteStage::gate_names(const results::Store& store, const results::CandidateTests& mine,
                                          const std::optional<results::CandidateTests>& reference,
                                          const results::TestDiff& diff,
                                          const std::map<std::int64_t, std::string>& fallen) const {
  results::GateNames names;
  const auto suite = store.test_suite(mine.suite);
  const auto outcome_of = [](std::uint8_t code) { return results::to_string(results::effective_outcome(code)); };
  if (m_s.require == results::TestGate::all_pass) {
    for (auto i : results::failing_tests(mine.outcomes)) {
      if (names.tests.size() >= results::kNamedTests) break;
      names.tests.push_back(fmt::format("{} ({})", suite.names[static_cast<std::size_t>(i)],
                                        outcome_of(mine.outcomes[static_cast<std::size_t>(i)])));
    }
    return names;
  }
  for (auto i : diff.regressions) {
    if (names.tests.size() >= results::kNamedTests) return names;
    const auto number = fallen.find(i);  // a passing test that ran fewer checks says so
    names.tests.push_back(fmt::format("{} ({})", suite.names[static_cast<std::size_t>(i)],
                                      number != fallen.end() ? number->second
                                                             : outcome_of(mine.outcomes[static_cast<std::size_t>(i)])));
  }
  if (diff.dropped.empty() || !reference) return names;
  const auto reference_suite = store.test_suite(reference->suite);
  for (auto i : diff.dropped) {
    if (names.tests.size() >= results::kNamedTests) break;
    names.tests.push_back(fmt::format("{} (not run: absent)", reference_suite.names[static_cast<std::size_t>(i)]));
  }
  return names;
}

// Files suites: the candidate's reported names that name none of its files (a report that names
// them by basename, say), for a failed gate to say why its files were not run.
void SuiteStage::add_unmatched_names(results::GateNames& names, const results::TestSuite& suite,
                                     std::int64_t candidate) {
  std::vector<std::vector<std::string>> files;
  for (const auto& absolute : candidate_files(candidate))
    files.push_back({fs::path(absolute).lexically_relative(m_s.workdir).string(), absolute});
  std::vector<std::string> reported;
  for (const auto& name : suite.names)
    if (!name.starts_with("<shard ")) reported.push_back(name);  // a shard that died stands for itself
  const auto unmatched = suites::names_matching_no_file(reported, files);
  names.unmatched_total = unmatched.size();
  const auto named = static_cast<std::ptrdiff_t>(std::min(unmatched.size(), results::kNamedTests));
  names.unmatched.assign(unmatched.begin(), unmatched.begin() + named);
}

// evaluate.no_drop: a test whose number (e.g. the checks a file ran) fell below the baseline's
// regresses, whatever its outcome; added to the diff's regressions, and returned as the text
// the gate's reason shows for each ("tests 5 < 12").
std::map<std::int64_t, std::string> SuiteStage::number_regressions(const results::Store& store,
                                                                   const results::CandidateTests& mine,
                                                                   const std::optional<results::CandidateTests>& reference,
                                                                   results::TestDiff& diff) const {
  std::map<std::int64_t, std::string> fallen;
  if (m_s.suite_no_drop.empty() || !reference || reference->candidate == mine.candidate) return fallen;
  const auto drops = results::number_drops(store.test_suite(reference->suite), *reference, store.test_suite(mine.suite),
                                           mine, m_s.suite_no_drop);
  for (const auto& d : drops)
    fallen.try_emplace(d.test, std::isnan(d.candidate) ? fmt::format("{} missing, baseline {}", d.name, d.reference)
                                                       : fmt::format("{} {} < {}", d.name, d.candidate, d.reference));
  std::set<std::int64_t> regressions(diff.regressions.begin(), diff.regressions.end());
  for (const auto& [test, text] : fallen) regressions.insert(test);
  diff.regressions.assign(regressions.begin(), regressions.end());
  return fallen;
}

results::TrialRecord SuiteStage::verdict(results::Store& store, std::int64_t candidate, std::vector<std::string> argv,
                                         const CandidateTrials& trials,
                                         std::optional<std::int64_t> baseline) {
  results::TrialRecord v{.candidate = candidate, .kind = results::TrialKind::evaluate, .index = verdict_index(),
                         .start = now_seconds(), .objective = std::nan("")};
  const auto tested = store.tested_candidates();  // the index only: outcomes are read once, below
  if (std::find(tested.begin(), tested.end(), candidate) == tested.end()) {
    auto parsed = assemble(candidate, argv, trials);
    if (const auto* p = problem(parsed)) {
      v.status = results::TrialStatus::failed;
      v.reason = p->message;
      m_discovered.erase(candidate);
      v.end = now_seconds();
      return v;
    }
    auto& assembled = std::get<0>(parsed);
    const auto suite = store.add_test_suite(assembled.suite);
    store.add_test_results({.candidate = candidate, .suite = suite, .outcomes = std::move(assembled.outcomes),
                            .durations = std::move(assembled.durations),
                            .messages = std::move(assembled.messages),
                            .numbers = std::move(assembled.numbers)});
  }
  // The verdict comes from the recorded bytes, as `flotilla results tests` computes it.
  const auto mine = *store.test_results(candidate);
  const auto summary = results::summarize(mine.outcomes);
  results::TestDiff diff;
  std::optional<results::CandidateTests> reference;
  std::optional<results::TestSummary> reference_summary;
  if (m_s.require == results::TestGate::no_regression && baseline == candidate) {
    reference_summary = summary;
  } else if (m_s.require == results::TestGate::no_regression && baseline &&
             (reference = store.test_results(*baseline))) {
    reference_summary = results::summarize(reference->outcomes);
    diff = reference->suite == mine.suite
               ? results::diff_outcomes(reference->outcomes, mine.outcomes)
               : results::diff_outcomes(store.test_suite(reference->suite), reference->outcomes,
                                        store.test_suite(mine.suite), mine.outcomes);
  }
  const auto fallen = number_regressions(store, mine, reference, diff);
  const bool all_pass = m_s.require == results::TestGate::all_pass;
  const auto decide = [&](const results::GateNames& names) {
    return results::decide_gate(m_s.require, summary, all_pass ? nullptr : reference_summary ? &*reference_summary : nullptr,
                                all_pass || !reference_summary ? nullptr : &diff, names);
  };
  results::GateVerdict gate = decide({});
  if (!gate.passed) {
    auto names = gate_names(store, mine, reference, diff, fallen);
    if (file_suite() && summary.not_run > 0) add_unmatched_names(names, store.test_suite(mine.suite), candidate);
    gate = decide(names);
  }
  v.status = gate.passed ? results::TrialStatus::ok : results::TrialStatus::failed;
  v.reason = gate.reason;
  v.metrics = {{"tests", static_cast<double>(summary.total)},
               {"tests_passed", static_cast<double>(summary.pass)},
               {"tests_failed", static_cast<double>(summary.fail + summary.error + summary.timeout)},
               {"tests_skipped", static_cast<double>(summary.skip)},
               {"tests_not_run", static_cast<double>(summary.not_run)},
               {"tests_flaky", static_cast<double>(summary.flaky)},
               {"tests_regressions", static_cast<double>(diff.regression_count())},
               {"tests_fixes", static_cast<double>(diff.fixes.size())}};
  if (!m_s.suite_no_drop.empty()) v.metrics.push_back({"tests_fewer_checks", static_cast<double>(fallen.size())});
  // What intent.objective = tests.passed / tests.GROUP counts (docs/propose.md): the tests (per
  // file: files) that passed, and each summary group's sum over the files that gave it.
  v.metrics.push_back({"tests.passed", static_cast<double>(summary.pass)});
  std::map<std::string, double> groups;
  for (const auto& n : mine.numbers)
    if (std::isfinite(n.value)) groups[n.name] += n.value;
  for (const auto& [name, sum] : groups)
    if (name != "passed") v.metrics.push_back({"tests." + name, sum});  // tests.passed counts tests
  m_discovered.erase(candidate);
  v.end = now_seconds();
  return v;
}

}  // namespace flotilla::scheduler
