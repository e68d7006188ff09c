// TestTables.cpp — reading and appending the /tests group (layout and invariants: TestTables.h).
#include "TestTables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>

#include "Schema.h"

namespace flotilla::results::tests {

namespace {

constexpr const char* kGroup = "tests";
constexpr const char* kNames = "tests/names";
constexpr const char* kSuites = "tests/suites";
constexpr const char* kOutcomes = "tests/outcomes";
constexpr const char* kDurations = "tests/durations";
constexpr const char* kMessages = "tests/messages";
constexpr const char* kRuns = "tests/runs";
// Per-test numbers (per_file suites), added later: a file without them has none, and gains the
// empty tables when it is reopened for appending.
constexpr const char* kNumbers = "tests/numbers";
constexpr const char* kNumberRuns = "tests/number_runs";
// 1 MiB chunks: large enough that deflate sees long runs of equal bytes, small enough that
// reading one candidate's outcomes does not decompress much of its neighbours'.
constexpr hsize_t kByteChunk = 1 << 20;
constexpr hsize_t kRowChunk = 64;
constexpr std::size_t kMessageBytes = 256;

struct MessageRow {
  std::int64_t test;
  char text[kMessageBytes];
};

struct NumberRow {
  std::int64_t test;
  double value;
  char name[kNumberNameBytes];
};

struct NumberRunRow {
  std::int64_t candidate;
  std::int64_t numbers_start;  // row in /tests/numbers
  std::int64_t numbers;
};

h5::Handle int64_compound(std::size_t size, std::initializer_list<std::pair<const char*, std::size_t>> fields) {
  h5::Handle type(FLOTILLA_H5(H5Tcreate(H5T_COMPOUND, size)));
  for (const auto& [name, offset] : fields) FLOTILLA_H5(H5Tinsert(type.id(), name, offset, H5T_NATIVE_INT64));
  return type;
}

h5::Handle suite_type() {
  h5::Handle type = int64_compound(sizeof(SuiteRow), {{"id", offsetof(SuiteRow, id)},
                                                      {"tests", offsetof(SuiteRow, tests)},
                                                      {"names_start", offsetof(SuiteRow, names_start)},
                                                      {"names_bytes", offsetof(SuiteRow, names_bytes)}});
  FLOTILLA_H5(H5Tinsert(type.id(), "digest", offsetof(SuiteRow, digest), H5T_NATIVE_UINT64));
  return type;
}

h5::Handle run_type() {
  return int64_compound(sizeof(RunRow), {{"candidate", offsetof(RunRow, candidate)},
                                         {"suite", offsetof(RunRow, suite)},
                                         {"tests", offsetof(RunRow, tests)},
                                         {"outcomes_start", offsetof(RunRow, outcomes_start)},
                                         {"durations_start", offsetof(RunRow, durations_start)},
                                         {"messages_start", offsetof(RunRow, messages_start)},
                                         {"messages", offsetof(RunRow, messages)}});
}

h5::Handle message_type() {
  h5::Handle type = int64_compound(sizeof(MessageRow), {{"test", offsetof(MessageRow, test)}});
  h5::Handle text = h5::string_type(kMessageBytes);
  FLOTILLA_H5(H5Tinsert(type.id(), "text", offsetof(MessageRow, text), text.id()));
  return type;
}

h5::Handle number_type() {
  h5::Handle type = int64_compound(sizeof(NumberRow), {{"test", offsetof(NumberRow, test)}});
  FLOTILLA_H5(H5Tinsert(type.id(), "value", offsetof(NumberRow, value), H5T_NATIVE_DOUBLE));
  h5::Handle name = h5::string_type(kNumberNameBytes);
  FLOTILLA_H5(H5Tinsert(type.id(), "name", offsetof(NumberRow, name), name.id()));
  return type;
}

h5::Handle number_run_type() {
  return int64_compound(sizeof(NumberRunRow), {{"candidate", offsetof(NumberRunRow, candidate)},
                                               {"numbers_start", offsetof(NumberRunRow, numbers_start)},
                                               {"numbers", offsetof(NumberRunRow, numbers)}});
}

h5::Handle create_row_table(hid_t file, const char* name, const h5::Handle& type) {
  h5::Handle file_type = schema::make_file_type(type.id());
  return h5::create_table(file, name, file_type.id(), kRowChunk);
}

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return hash;
}

// Index of the first name that repeats an earlier one, if any. Sorting (hash, index) pairs is
// several times faster than a hash set on millions of names (no pointer chasing); names are
// compared only where hashes collide.
std::optional<std::size_t> first_duplicate(const std::vector<std::string>& names) {
  std::vector<std::pair<std::uint64_t, std::size_t>> keyed(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) keyed[i] = {std::hash<std::string>{}(names[i]), i};
  std::sort(keyed.begin(), keyed.end());
  std::optional<std::size_t> first;
  for (std::size_t begin = 0, end = 0; begin < keyed.size(); begin = end) {
    for (end = begin + 1; end < keyed.size() && keyed[end].first == keyed[begin].first; ++end) {
    }
    for (std::size_t a = begin; a < end; ++a) {
      for (std::size_t b = a + 1; b < end; ++b) {
        if (names[keyed[a].second] == names[keyed[b].second])
          first = std::min(first.value_or(keyed[b].second), keyed[b].second);
      }
    }
  }
  return first;
}

std::string joined_names(const TestSuite& suite) {
  std::size_t size = 0;
  for (const auto& name : suite.names) size += name.size() + 1;
  std::string joined;
  joined.reserve(size);
  for (std::size_t i = 0; i < suite.names.size(); ++i) {
    const std::string& name = suite.names[i];
    if (name.empty() || name.find('\n') != std::string::npos) {
      throw InvalidTests(fmt::format("test {} of the suite: a test name must be one non-empty line", i));
    }
    joined += name;
    joined += '\n';
  }
  if (const auto repeated = first_duplicate(suite.names)) {
    throw InvalidTests(
        fmt::format("test {} of the suite: duplicate test name '{}'", *repeated, suite.names[*repeated]));
  }
  return joined;
}

template <class T>
std::vector<T> read_range(hid_t dataset, hid_t type, std::int64_t start, std::int64_t count) {
  std::vector<T> out(static_cast<std::size_t>(count));
  if (count > 0) h5::read_rows(dataset, type, out.data(), static_cast<hsize_t>(count), static_cast<hsize_t>(start));
  return out;
}

h5::Handle open_dataset(hid_t file, const char* name) {
  return h5::Handle(FLOTILLA_H5(H5Dopen2(file, name, H5P_DEFAULT)));
}

}  // namespace

bool Tables::present(hid_t file) { return FLOTILLA_H5(H5Lexists(file, kGroup, H5P_DEFAULT)) > 0; }

Tables Tables::create(hid_t file) {
  h5::Handle group(FLOTILLA_H5(H5Gcreate2(file, kGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  Tables tables;
  tables.m_suite_type = suite_type();
  tables.m_run_type = run_type();
  tables.m_message_type = message_type();
  const auto table = [&](const char* name, const h5::Handle& type) {
    h5::Handle file_type = schema::make_file_type(type.id());
    return h5::create_table(file, name, file_type.id(), kRowChunk);
  };
  // Deflate level 1: nearly all of the gain of higher levels on these bytes, at a third of the cost.
  tables.m_names = h5::create_table(file, kNames, H5T_STD_U8LE, kByteChunk, 1);
  tables.m_outcomes = h5::create_table(file, kOutcomes, H5T_STD_U8LE, kByteChunk, 1);
  tables.m_durations = h5::create_table(file, kDurations, H5T_STD_U8LE, kByteChunk, 1);
  tables.m_suites = table(kSuites, tables.m_suite_type);
  tables.m_runs = table(kRuns, tables.m_run_type);
  tables.m_messages = table(kMessages, tables.m_message_type);
  tables.m_number_type = number_type();
  tables.m_number_run_type = number_run_type();
  tables.m_numbers = create_row_table(file, kNumbers, tables.m_number_type);
  tables.m_number_runs = create_row_table(file, kNumberRuns, tables.m_number_run_type);
  return tables;
}

void Tables::add_missing(hid_t file) {
  if (FLOTILLA_H5(H5Lexists(file, kNumbers, H5P_DEFAULT)) > 0) return;
  create_row_table(file, kNumbers, number_type());
  create_row_table(file, kNumberRuns, number_run_type());
}

Tables Tables::open(hid_t file, bool swmr_read) {
  Tables tables;
  tables.m_swmr_read = swmr_read;
  tables.m_suite_type = suite_type();
  tables.m_run_type = run_type();
  tables.m_message_type = message_type();
  tables.m_names = open_dataset(file, kNames);
  tables.m_suites = open_dataset(file, kSuites);
  tables.m_outcomes = open_dataset(file, kOutcomes);
  tables.m_durations = open_dataset(file, kDurations);
  tables.m_messages = open_dataset(file, kMessages);
  tables.m_runs = open_dataset(file, kRuns);
  tables.m_number_type = number_type();
  tables.m_number_run_type = number_run_type();
  if (FLOTILLA_H5(H5Lexists(file, kNumbers, H5P_DEFAULT)) > 0) {  // absent in files from before numbers
    tables.m_numbers = open_dataset(file, kNumbers);
    tables.m_number_runs = open_dataset(file, kNumberRuns);
  }
  return tables;
}

void Tables::refresh(const h5::Handle& dataset) const {
  if (m_swmr_read) FLOTILLA_H5(H5Drefresh(dataset.id()));
}

std::vector<SuiteRow> Tables::suite_rows() const {
  refresh(m_suites);
  return h5::read_table<SuiteRow>(m_suites.id(), m_suite_type.id());
}

void Tables::load_writer_state() {
  for (const SuiteRow& row : suite_rows()) m_suites_by_digest.emplace(row.digest, row);
  for (const RunRow& row : runs()) m_run_by_candidate.emplace(row.candidate, row);
}

std::int64_t Tables::add_suite(const TestSuite& suite) {
  const std::string joined = joined_names(suite);
  const std::uint64_t digest = fnv1a(joined);
  const auto [first, last] = m_suites_by_digest.equal_range(digest);
  for (auto it = first; it != last; ++it) {
    const SuiteRow& row = it->second;
    if (row.names_bytes != static_cast<std::int64_t>(joined.size())) continue;
    const auto bytes = read_range<char>(m_names.id(), H5T_NATIVE_UINT8, row.names_start, row.names_bytes);
    if (std::string_view(bytes.data(), bytes.size()) == joined) return row.id;
  }
  SuiteRow row{};
  row.id = static_cast<std::int64_t>(h5::row_count(m_suites.id()));
  row.tests = static_cast<std::int64_t>(suite.names.size());
  row.names_start = static_cast<std::int64_t>(h5::row_count(m_names.id()));
  row.names_bytes = static_cast<std::int64_t>(joined.size());
  row.digest = digest;
  // Bytes as uint8 in memory too: a signed char memory type would convert (and range-check) each byte.
  if (!joined.empty()) h5::append_rows(m_names.id(), H5T_NATIVE_UINT8, joined.data(), joined.size());
  h5::append_rows(m_suites.id(), m_suite_type.id(), &row, 1);  // commits the suite
  m_suites_by_digest.emplace(digest, row);
  return row.id;
}

bool Tables::add_run(const CandidateTests& tests) {
  if (m_run_by_candidate.contains(tests.candidate)) return false;
  const auto suites = suite_rows();
  if (tests.suite < 0 || tests.suite >= static_cast<std::int64_t>(suites.size())) {
    throw InvalidTests(fmt::format("candidate {}: test suite {} is not recorded", tests.candidate, tests.suite));
  }
  const std::int64_t count = suites[static_cast<std::size_t>(tests.suite)].tests;
  const auto expect_size = [&](const char* what, std::size_t size) {
    if (static_cast<std::int64_t>(size) != count) {
      throw InvalidTests(
          fmt::format("candidate {}: {} {} for a suite of {} tests", tests.candidate, size, what, count));
    }
  };
  expect_size("outcomes", tests.outcomes.size());
  if (!tests.durations.empty()) expect_size("durations", tests.durations.size());
  std::vector<MessageRow> messages(tests.messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const TestMessage& message = tests.messages[i];
    if (message.test < 0 || message.test >= count) {
      throw InvalidTests(fmt::format("candidate {}: message for test {} outside the suite of {} tests", tests.candidate,
                                     message.test, count));
    }
    messages[i].test = message.test;
    const std::string_view kept = schema::utf8_head(message.text, kMessageBytes - 1);
    std::memcpy(messages[i].text, kept.data(), kept.size());
    messages[i].text[kept.size()] = '\0';
  }
  std::vector<NumberRow> numbers(tests.numbers.size());
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const TestNumber& number = tests.numbers[i];
    if (number.test < 0 || number.test >= count)
      throw InvalidTests(fmt::format("candidate {}: number '{}' for test {} outside the suite of {} tests",
                                     tests.candidate, number.name, number.test, count));
    if (number.name.empty() || number.name.size() >= kNumberNameBytes)
      throw InvalidTests(fmt::format("candidate {}: number name '{}' is empty or longer than {} bytes", tests.candidate,
                                     number.name, kNumberNameBytes - 1));
    numbers[i].test = number.test;
    numbers[i].value = number.value;
    std::memcpy(numbers[i].name, number.name.data(), number.name.size());
    numbers[i].name[number.name.size()] = '\0';
  }
  if (!numbers.empty() && !m_numbers.valid())
    throw InvalidTests(fmt::format("candidate {}: this file has no /tests/numbers to record per-test numbers in",
                                   tests.candidate));
  RunRow row{};
  row.candidate = tests.candidate;
  row.suite = tests.suite;
  row.tests = count;
  row.outcomes_start = static_cast<std::int64_t>(h5::row_count(m_outcomes.id()));
  row.durations_start = tests.durations.empty() ? -1 : static_cast<std::int64_t>(h5::row_count(m_durations.id()));
  row.messages_start = static_cast<std::int64_t>(h5::row_count(m_messages.id()));
  row.messages = static_cast<std::int64_t>(messages.size());
  if (count > 0) h5::append_rows(m_outcomes.id(), H5T_NATIVE_UINT8, tests.outcomes.data(), count);
  if (!tests.durations.empty() && count > 0) {
    h5::append_rows(m_durations.id(), H5T_NATIVE_UINT8, tests.durations.data(), count);
  }
  if (!messages.empty()) h5::append_rows(m_messages.id(), m_message_type.id(), messages.data(), messages.size());
  if (!numbers.empty()) {
    // Before the run row, which commits both; a writer killed in between leaves a number run
    // without a run, and the retry appends another: readers take the candidate's last one.
    const NumberRunRow locator{tests.candidate, static_cast<std::int64_t>(h5::row_count(m_numbers.id())),
                               static_cast<std::int64_t>(numbers.size())};
    h5::append_rows(m_numbers.id(), m_number_type.id(), numbers.data(), numbers.size());
    h5::append_rows(m_number_runs.id(), m_number_run_type.id(), &locator, 1);
  }
  h5::append_rows(m_runs.id(), m_run_type.id(), &row, 1);  // commits the run
  m_run_by_candidate.emplace(row.candidate, row);
  return true;
}

std::vector<RunRow> Tables::runs() const {
  refresh(m_runs);
  return h5::read_table<RunRow>(m_runs.id(), m_run_type.id());
}

std::optional<RunRow> Tables::run_of(std::int64_t candidate) const {
  for (const RunRow& row : runs()) {
    if (row.candidate == candidate) return row;
  }
  return std::nullopt;
}

TestSuite Tables::suite(std::int64_t id) const {
  const auto rows = suite_rows();
  if (id < 0 || id >= static_cast<std::int64_t>(rows.size())) {
    throw h5::Error(fmt::format("test suite {} is not recorded", id));
  }
  const SuiteRow& row = rows[static_cast<std::size_t>(id)];
  refresh(m_names);
  const auto bytes = read_range<char>(m_names.id(), H5T_NATIVE_UINT8, row.names_start, row.names_bytes);
  TestSuite suite;
  suite.names.reserve(static_cast<std::size_t>(row.tests));
  std::string_view rest(bytes.data(), bytes.size());
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    if (end == std::string_view::npos) throw h5::Error(fmt::format("test suite {}: names are cut short", id));
    suite.names.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  if (static_cast<std::int64_t>(suite.names.size()) != row.tests) {
    throw h5::Error(fmt::format("test suite {}: {} names recorded for {} tests", id, suite.names.size(), row.tests));
  }
  return suite;
}

std::vector<std::uint8_t> Tables::read_outcomes(const RunRow& row) const {
  refresh(m_outcomes);
  return read_range<std::uint8_t>(m_outcomes.id(), H5T_NATIVE_UINT8, row.outcomes_start, row.tests);
}

CandidateTests Tables::read_run(const RunRow& row) const {
  refresh(m_outcomes);
  refresh(m_durations);
  refresh(m_messages);
  CandidateTests tests;
  tests.candidate = row.candidate;
  tests.suite = row.suite;
  tests.outcomes = read_range<std::uint8_t>(m_outcomes.id(), H5T_NATIVE_UINT8, row.outcomes_start, row.tests);
  if (row.durations_start >= 0) {
    tests.durations = read_range<std::uint8_t>(m_durations.id(), H5T_NATIVE_UINT8, row.durations_start, row.tests);
  }
  for (const MessageRow& message :
       read_range<MessageRow>(m_messages.id(), m_message_type.id(), row.messages_start, row.messages)) {
    tests.messages.push_back({message.test, std::string(message.text, strnlen(message.text, kMessageBytes))});
  }
  if (!m_numbers.valid()) return tests;
  refresh(m_number_runs);
  refresh(m_numbers);
  std::optional<NumberRunRow> locator;
  for (const auto& r : h5::read_table<NumberRunRow>(m_number_runs.id(), m_number_run_type.id()))
    if (r.candidate == row.candidate) locator = r;  // the last one: see add_run
  if (!locator) return tests;
  for (const NumberRow& n : read_range<NumberRow>(m_numbers.id(), m_number_type.id(), locator->numbers_start, locator->numbers))
    tests.numbers.push_back({n.test, std::string(n.name, strnlen(n.name, kNumberNameBytes)), n.value});
  return tests;
}

}  // namespace flotilla::results::tests
