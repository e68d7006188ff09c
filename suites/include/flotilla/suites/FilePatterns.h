// FilePatterns.h — evaluate.files: several patterns, recursive `**`, and @LIST files (pure rules;
// the walk over the file system is the scheduler's, SuiteStage::test_files).
//
//   files = corpus/**/*.test  extra/*.test  @more.list
//
// Patterns are separated by blanks (a name with a blank goes in a list file). A pattern without
// `**` is glob(3)'s. `**` as a whole path segment matches zero or more directories. `@FILE`
// names a list file: one path a line, relative to the working directory; blank lines and lines
// starting with '#' are skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flotilla::suites {

std::vector<std::string> split_file_patterns(std::string_view spec);

// Whether `path` (segments separated by '/') matches `pattern`: each segment as fnmatch(3) with a
// leading '.' matched only explicitly; a `**` segment matches any number of whole segments.
bool matches_path_pattern(std::string_view pattern, std::string_view path);

// The directory a recursive pattern's walk starts from: its leading segments that hold no
// wildcard ("corpus/sub" of "corpus/sub/**/*.test"; "." when the first segment has one).
std::string literal_root(std::string_view pattern);

bool has_wildcard(std::string_view segment);

// The entries of a list file's text: paths, in order; blank and '#' lines skipped, each
// line's trailing blanks and '\r' removed.
std::vector<std::string> parse_file_list(std::string_view text);

}  // namespace flotilla::suites
