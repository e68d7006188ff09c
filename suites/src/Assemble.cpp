// Assemble.cpp — shard reports and re-runs into one outcome byte per test (rules: Assemble.h).
#include <flotilla/suites/Assemble.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace flotilla::suites {

using results::TestOutcome;

namespace {

// Message for a test its shard was given but never reported.
std::string missing_message(const std::string& ended, int shard) {
  return ended.empty() ? fmt::format("given to shard {} but not reported", shard)
                       : fmt::format("given to shard {} but not reported: {}", shard, ended);
}

// Whether a test's name names one of `names`: the whole name, or a prefix followed by one of
// the separators checkers put between a file and its case.
bool names_a_file(std::string_view test, const std::unordered_map<std::string_view, std::size_t>& names,
                  std::vector<bool>& named) {
  const auto mark = [&](std::string_view prefix) {
    const auto it = names.find(prefix);
    if (it == names.end()) return false;
    named[it->second] = true;
    return true;
  };
  if (mark(test)) return true;
  for (std::size_t i = 0; i < test.size(); ++i) {
    const char c = test[i];
    if ((c == ':' || c == ' ' || c == '#' || c == '(' || c == '[') && mark(test.substr(0, i))) return true;
  }
  return false;
}

class Builder {
 public:
  explicit Builder(const std::optional<std::vector<std::string>>& discovered) : m_fixed(discovered.has_value()) {
    if (!discovered) return;
    m_out.suite.names = *discovered;
    m_index.reserve(discovered->size());
    for (std::size_t i = 0; i < discovered->size(); ++i) m_index.emplace((*discovered)[i], i);
    resize();
  }

  void add(const TestResult& result, int shard) {
    auto found = m_index.find(result.name);
    if (found == m_index.end()) {
      if (m_fixed) {
        throw ReportError(fmt::format("shard {} reported test '{}', which discovery did not list", shard, result.name));
      }
      m_out.suite.names.push_back(result.name);
      found = m_index.emplace(m_out.suite.names.back(), m_out.suite.names.size() - 1).first;
      resize();
    }
    const std::size_t i = found->second;
    if (m_seen[i]) throw ReportError(fmt::format("shard {} reported test '{}' a second time", shard, result.name));
    set(i, result.outcome, result.seconds, result.message);
    for (const auto& [name, value] : result.numbers) m_numbers[static_cast<std::int64_t>(i)].push_back({name, value});
  }

  void set(std::size_t i, TestOutcome outcome, double seconds, const std::string& message) {
    m_seen[i] = true;
    m_out.outcomes[i] = results::encode_outcome(outcome);
    m_out.durations[i] = results::quantise_duration(seconds);
    if (outcome != TestOutcome::pass && !message.empty()) m_messages[static_cast<std::int64_t>(i)] = message;
  }

  bool seen(std::size_t i) const { return m_seen[i]; }

  // Room for `tests` names without rehashing (a suite without discovery grows as shards report).
  void reserve(std::size_t tests) {
    m_index.reserve(tests);
    m_out.suite.names.reserve(tests);
  }

  Assembled finish() {
    // A listed test nothing reported (a listing, whose shards select their tests themselves).
    for (std::size_t i = 0; m_fixed && i < m_seen.size(); ++i)
      if (!m_seen[i] && !m_messages.contains(static_cast<std::int64_t>(i)))
        m_messages[static_cast<std::int64_t>(i)] = "listed, but reported by no shard";
    for (auto& [test, text] : m_messages) m_out.messages.push_back({test, std::move(text)});
    for (auto& [test, numbers] : m_numbers)
      for (auto& [name, value] : numbers) m_out.numbers.push_back({test, std::move(name), value});
    return std::move(m_out);
  }

 private:
  void resize() {
    m_out.outcomes.resize(m_out.suite.names.size(), results::encode_outcome(TestOutcome::not_run));
    m_out.durations.resize(m_out.suite.names.size(), 0);
    m_seen.resize(m_out.suite.names.size(), false);
  }

  bool m_fixed;
  Assembled m_out;
  std::unordered_map<std::string, std::size_t> m_index;  // keys copied: names may grow
  std::vector<bool> m_seen;
  std::map<std::int64_t, std::string> m_messages;
  std::map<std::int64_t, std::vector<std::pair<std::string, double>>> m_numbers;  // by test, in report order
};

// Files suites: a file no test of its shard's report names stands as a test of its own, not run.
void add_unnamed_files(Builder& builder, const std::vector<ShardRun>& shards) {
  for (const ShardRun& shard : shards) {
    if (shard.files.empty()) continue;
    std::unordered_map<std::string_view, std::size_t> names;
    for (std::size_t f = 0; f < shard.files.size(); ++f)
      for (const auto& name : shard.files[f]) names.emplace(name, f);
    std::vector<bool> named(shard.files.size(), false);
    std::vector<std::string> unmatched;
    for (const TestResult& result : shard.results)
      if (!names_a_file(result.name, names, named)) unmatched.push_back(result.name);
    // Why, when the report named something else: e.g. basenames for files given with a folder.
    const auto shown = static_cast<std::ptrdiff_t>(std::min(unmatched.size(), results::kNamedTests));
    const std::vector<std::string> first(unmatched.begin(), unmatched.begin() + shown);
    const std::string why = unmatched.empty() ? std::string()
                                              : fmt::format("; {} name{} it reported matched no file given to it: {}",
                                                            unmatched.size(), unmatched.size() == 1 ? "" : "s",
                                                            results::name_list(first, unmatched.size()));
    for (std::size_t f = 0; f < shard.files.size(); ++f) {
      if (named[f] || shard.files[f].empty()) continue;
      builder.add({.name = shard.files[f].front(),
                   .outcome = shard.timed_out ? TestOutcome::timeout : TestOutcome::not_run,
                   .message = fmt::format("given to shard {}, but no test of its report names it{}{}{}", shard.shard,
                                          shard.ended.empty() ? "" : ": ", shard.ended, why)},
                  shard.shard);
    }
  }
}

}  // namespace

std::vector<std::string> names_matching_no_file(const std::vector<std::string>& tests,
                                                const std::vector<std::vector<std::string>>& files) {
  std::unordered_map<std::string_view, std::size_t> names;
  for (std::size_t f = 0; f < files.size(); ++f)
    for (const auto& name : files[f]) names.emplace(name, f);
  std::vector<bool> named(files.size(), false);
  std::vector<std::string> unmatched;
  for (const auto& test : tests)
    if (!names_a_file(test, names, named)) unmatched.push_back(test);
  return unmatched;
}

Assembled assemble(const std::optional<std::vector<std::string>>& discovered, const std::vector<ShardRun>& shards) {
  Builder builder(discovered);
  if (!discovered) {
    std::size_t reported = 0;
    for (const ShardRun& shard : shards) reported += shard.results.size() + 1;  // + a "<shard N>" test
    builder.reserve(reported);
  }
  for (const ShardRun& shard : shards) {
    for (const TestResult& result : shard.results) builder.add(result, shard.shard);
  }
  if (!discovered) {
    add_unnamed_files(builder, shards);
    // The command shards itself, so nothing says which tests a shard should have reported. A
    // shard that crashed or timed out may have stopped before its failures (TAP's plan may come
    // last): it stands as a test of its own, so a suite whose shard died never passes.
    for (const ShardRun& shard : shards) {
      if (!shard.given.empty())
        throw ReportError(fmt::format("shard {} was given tests, but this suite kind has no discovery", shard.shard));
      // A non-zero exit with failures reported is how such commands say "tests failed"; one with
      // none reported (or a timeout) means the report cannot be trusted to be complete.
      const bool reported_failure = std::any_of(shard.results.begin(), shard.results.end(), [](const TestResult& r) {
        return results::is_failure(r.outcome);
      });
      if (!shard.timed_out && (shard.ended.empty() || reported_failure)) continue;
      builder.add({.name = fmt::format("<shard {}>", shard.shard),
                   .outcome = shard.timed_out ? TestOutcome::timeout : TestOutcome::error,
                   .message = shard.ended.empty() ? "timed out" : shard.ended},
                  shard.shard);
    }
    return builder.finish();
  }
  std::vector<int> given_to(discovered->size(), -1);  // which shard each test was given to
  for (const ShardRun& shard : shards) {
    for (const std::int64_t test : shard.given) {
      if (test < 0 || static_cast<std::size_t>(test) >= discovered->size())
        throw ReportError(fmt::format("shard {} was given test index {}, outside the discovery's {} tests", shard.shard,
                                      test, discovered->size()));
      const auto i = static_cast<std::size_t>(test);
      if (given_to[i] >= 0)
        throw ReportError(fmt::format("test '{}' was given to shard {} and to shard {}", (*discovered)[i], given_to[i],
                                      shard.shard));
      given_to[i] = shard.shard;
      if (builder.seen(i)) continue;
      builder.set(i, shard.timed_out ? TestOutcome::timeout : TestOutcome::not_run, -1,
                  missing_message(shard.ended, shard.shard));
    }
  }
  return builder.finish();
}

std::vector<std::int64_t> failures_to_rerun(const Assembled& assembled) {
  return results::failing_tests(assembled.outcomes);  // a test not reported gets its second chance too
}

void apply_rerun(Assembled& assembled, const std::vector<std::int64_t>& given, const std::vector<TestResult>& rerun,
                 bool timed_out) {
  std::unordered_map<std::string_view, const TestResult*> by_name;
  for (const TestResult& result : rerun) by_name.emplace(result.name, &result);
  for (const std::int64_t test : given) {
    const auto i = static_cast<std::size_t>(test);
    const auto found = by_name.find(assembled.suite.names.at(i));
    const TestOutcome second = found != by_name.end() ? found->second->outcome
                               : timed_out            ? TestOutcome::timeout
                                                      : TestOutcome::error;
    // The first run's outcome, duration and message stay: they are what the re-run is judged against.
    assembled.outcomes[i] = results::encode_outcome(results::first_outcome(assembled.outcomes[i]), second);
  }
}

}  // namespace flotilla::suites
