// Options.h — declarations of every campaign setting: the one table that Settings reads and
// validates against and that the command line's man pages and completions are generated from.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

struct OptionDecl {
  std::string_view key;            // "section.key"
  std::string_view default_value;  // empty: none
  bool required;
  bool multi;                      // may be given several times (a list)
  std::string_view help;
};

const std::vector<OptionDecl>& option_table();

// A setting's text and where it came from ("quickstart.ini:12", "command line", "default").
struct RawValue {
  std::string value;
  std::string where;
};
using RawValues = std::map<std::string, std::vector<RawValue>, std::less<>>;

// Command-line values replace the file's values of the same key.
RawValues merge_sources(RawValues file, RawValues overrides);
// Converts and checks every setting; errors name where the bad value came from.
Settings validate(RawValues raw, const std::string& display);
const OptionDecl* find_option(std::string_view key);

}  // namespace flotilla::scheduler
