// corpus_check — a small sqllogictest-style checker for the file-based corpus test: it takes a
// file listing .test files (one path a line) and writes a TAP report with one test per case.
//
// A .test file holds cases, one a line: "NAME: A OP B = C" with OP one of + - *; the case passes
// when the arithmetic holds. Lines starting with '#' are comments; "NAME: skip" is skipped.
// Usage: corpus_check LIST REPORT   (exit 0 when every case passes, 1 otherwise, 2 on bad input)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

struct Counts {
  long number = 0;
  bool failed = false;
};

// "A OP B = C" -> whether it holds; false with `bad` set when the line does not parse.
bool holds(const std::string& expression, bool& bad) {
  std::istringstream in(expression);
  long a = 0, b = 0, c = 0;
  char op = 0, eq = 0;
  if (!(in >> a >> op >> b >> eq >> c) || eq != '=') {
    bad = true;
    return false;
  }
  switch (op) {
    case '+':
      return a + b == c;
    case '-':
      return a - b == c;
    case '*':
      return a * b == c;
    default:
      bad = true;
      return false;
  }
}

void check_file(const std::string& path, std::ostream& tap, Counts& counts) {
  std::ifstream in(path);
  if (!in) {
    tap << "not ok " << ++counts.number << " - " << path << "\n  ---\n  message: 'cannot read the file'\n  ...\n";
    counts.failed = true;
    return;
  }
  std::string line;
  for (long line_number = 1; std::getline(in, line); ++line_number) {
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(':');
    const std::string name = path + ":" + line.substr(0, colon);
    const std::string body = colon == std::string::npos ? "" : line.substr(colon + 1);
    if (body == " skip") {
      tap << "ok " << ++counts.number << " - " << name << " # SKIP marked skip\n";
      continue;
    }
    bool bad = false;
    if (holds(body, bad)) {
      tap << "ok " << ++counts.number << " - " << name << "\n";
      continue;
    }
    counts.failed = true;
    tap << "not ok " << ++counts.number << " - " << name << "\n  ---\n  message: '"
        << (bad ? "line " + std::to_string(line_number) + ": not 'A OP B = C'" : "wrong result") << "'\n  ...\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: corpus_check LIST REPORT\n";
    return 2;
  }
  std::ifstream list(argv[1]);
  if (!list) {
    std::cerr << "corpus_check: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::ostringstream tap;
  Counts counts;
  for (std::string path; std::getline(list, path);) {
    if (!path.empty()) check_file(path, tap, counts);
  }
  std::ofstream report(argv[2]);
  report << "TAP version 13\n1.." << counts.number << "\n" << tap.str();
  if (!report.flush()) {
    std::cerr << "corpus_check: cannot write " << argv[2] << "\n";
    return 2;
  }
  return counts.failed ? 1 : 0;
}
