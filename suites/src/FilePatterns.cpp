// FilePatterns.cpp — see FilePatterns.h.
#include "flotilla/suites/FilePatterns.h"

#include <fnmatch.h>

namespace flotilla::suites {
namespace {

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto part = path.substr(0, slash);
    if (!part.empty() && part != ".") out.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool match_segments(const std::vector<std::string_view>& pattern, std::size_t p,
                    const std::vector<std::string_view>& path, std::size_t s) {
  if (p == pattern.size()) return s == path.size();
  if (pattern[p] == "**") {
    for (std::size_t skip = s; skip <= path.size(); ++skip)  // zero or more whole segments
      if (match_segments(pattern, p + 1, path, skip)) return true;
    return false;
  }
  if (s == path.size()) return false;
  const std::string seg_pattern(pattern[p]), seg(path[s]);
  if (::fnmatch(seg_pattern.c_str(), seg.c_str(), FNM_PERIOD) != 0) return false;
  return match_segments(pattern, p + 1, path, s + 1);
}

}  // namespace

std::vector<std::string> split_file_patterns(std::string_view spec) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < spec.size()) {
    while (i < spec.size() && (spec[i] == ' ' || spec[i] == '\t')) ++i;
    const std::size_t begin = i;
    while (i < spec.size() && spec[i] != ' ' && spec[i] != '\t') ++i;
    if (i > begin) out.emplace_back(spec.substr(begin, i - begin));
  }
  return out;
}

bool has_wildcard(std::string_view segment) { return segment.find_first_of("*?[") != std::string_view::npos; }

bool matches_path_pattern(std::string_view pattern, std::string_view path) {
  return match_segments(segments(pattern), 0, segments(path), 0);
}

std::string literal_root(std::string_view pattern) {
  std::string root;
  const bool absolute = pattern.starts_with('/');
  for (const auto segment : segments(pattern)) {
    if (has_wildcard(segment)) break;
    root += (root.empty() && !absolute ? "" : "/") + std::string(segment);
  }
  // The last literal segment may be the file itself ("a/b.test" has no wildcard at all).
  return root.empty() ? (absolute ? "/" : ".") : root;
}

std::vector<std::string> parse_file_list(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    out.emplace_back(line);
  }
  return out;
}

}  // namespace flotilla::suites
