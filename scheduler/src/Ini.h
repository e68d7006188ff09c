// Ini.h — the campaign file's syntax, read by hand rather than by Boost.Program_options, so that
// every line is accounted for and a '#' inside a value stays in it (internal to the scheduler).
//
// Rules (docs/config.md):
//  - Lines are `[section]`, `key = value`, blank, or comments starting with '#' or ';'.
//  - In a value, '#' starts a comment only at the value's start or after a blank, and outside
//    single or double quotes; `\#` is a literal '#'. So `--label=#1` and `"# not a comment"`
//    are kept whole, and `repeats = 3   # the median counts` is 3.
//  - Keys are `section.key`; the same key may appear several times (validation decides
//    whether a key takes a list). Values are trimmed.
//  - The file must be UTF-8 (a leading byte-order mark is skipped) and hold no NUL byte.
// Errors are ConfigError naming the file and line: `c.ini:7: expected 'key = value', '[section]'
// or a comment, found 'tile_x 8'`. parse_ini is pure: it is fuzzed (tests/fuzz).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flotilla::scheduler {

struct IniEntry {
  std::string key;      // "section.key"; "key" before any section
  std::string value;    // trimmed, comments removed, "\#" unescaped
  int line = 0;         // 1-based
  std::string comment;  // the comment cut from the value, if any (for the placeholder check)
};

// Throws ConfigError("DISPLAY:LINE: ...").
std::vector<IniEntry> parse_ini(std::string_view text, std::string_view display);

// True when `text` is valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool is_utf8(std::string_view text);

// `s` without the spaces, tabs and carriage returns at either end.
std::string_view trim(std::string_view s);

}  // namespace flotilla::scheduler
