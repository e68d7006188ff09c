// Ini.cpp — the campaign file's syntax (Ini.h).
#include "Ini.h"

#include <fmt/format.h>

#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

namespace {

// Printable form of a line for an error message: at most 60 bytes, control bytes as '?'.
std::string shown(std::string_view line) {
  std::string out;
  for (char c : line.substr(0, 60)) out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
  return line.size() > 60 ? out + "..." : out;
}

// Splits a value from its comment (Ini.h's rule) and unescapes "\#".
void split_comment(std::string_view raw, std::string& value, std::string& comment) {
  char quote = 0;
  bool after_blank = true;  // the value's start counts as after a blank
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
      value += '#';
      ++i;
      after_blank = false;
      continue;
    }
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && after_blank) {
      comment = std::string(trim(raw.substr(i + 1)));
      break;
    }
    value += c;
    after_blank = is_blank(c);
  }
  value = std::string(trim(value));
}

}  // namespace

bool is_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = s[i];
    std::size_t extra = 0;
    unsigned min = 0, cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, min = 0x80, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, min = 0x800, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, min = 0x10000, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= n) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

std::vector<IniEntry> parse_ini(std::string_view text, std::string_view display) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<IniEntry> entries;
  std::string section;
  int number = 0;
  for (std::size_t begin = 0; begin <= text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    ++number;
    begin = end + 1;
    const auto where = [&] { return fmt::format("{}:{}", display, number); };
    if (line.find('\0') != std::string_view::npos)
      throw ConfigError(fmt::format("{}: the line holds a NUL byte: a campaign file is text", where()));
    if (!is_utf8(line)) throw ConfigError(fmt::format("{}: the line is not UTF-8", where()));
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '#' || t.front() == ';') {
      if (end == text.size()) break;
      continue;
    }
    if (t.front() == '[') {
      if (t.back() != ']' || t.size() < 3)
        throw ConfigError(fmt::format("{}: '{}' is not a [section]", where(), shown(t)));
      section = std::string(trim(t.substr(1, t.size() - 2)));
      if (section.empty() || section.find_first_of("[]= \t") != std::string::npos)
        throw ConfigError(fmt::format("{}: '{}' is not a [section]", where(), shown(t)));
    } else if (const auto eq = t.find('='); eq != std::string_view::npos && eq > 0) {
      const std::string key(trim(t.substr(0, eq)));
      if (key.find_first_of(" \t[]#") != std::string::npos)
        throw ConfigError(fmt::format("{}: '{}' is not a key", where(), shown(key)));
      IniEntry entry{.key = section.empty() ? key : section + "." + key, .line = number};
      split_comment(t.substr(eq + 1), entry.value, entry.comment);
      entries.push_back(std::move(entry));
    } else {
      throw ConfigError(fmt::format("{}: expected 'key = value', '[section]' or a comment, found '{}'", where(),
                                    shown(t)));
    }
    if (end == text.size()) break;
  }
  return entries;
}

}  // namespace flotilla::scheduler
