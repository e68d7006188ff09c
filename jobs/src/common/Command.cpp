// Command.cpp — command templates to argv (Command.h).
//
// Hand-written splitter: boost::program_options::split_unix (1.74) is not POSIX — it drops empty
// quoted words (''), lets ' close a "-quoted word, and throws on escapes such as '\q' inside
// quotes — and a template author must get exactly what sh would give.
// Invariant: placeholders are substituted after splitting, word by word, so a value can neither
// split a word nor be re-parsed as quotes; "{{" and "}}" are the only brace escapes.
#include "flotilla/jobs/Command.h"

#include <algorithm>
#include <utility>

namespace flotilla::jobs {
namespace {

bool is_separator(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Inside "...", a backslash escapes only these (POSIX "Double-Quotes"); elsewhere it is literal.
bool escapable_in_double_quotes(char c) {
  return c == '$' || c == '`' || c == '"' || c == '\\' || c == '\n';
}

// Appends the "..." quoted text starting after the opening quote at `pos`; returns the index of
// the closing quote.
std::size_t read_double_quoted(std::string_view text, std::size_t pos, std::string& word) {
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') return i;
    if (c == '\\' && i + 1 < text.size() && escapable_in_double_quotes(text[i + 1])) {
      if (text[++i] != '\n') word += text[i];  // backslash-newline is a line continuation
    } else {
      word += c;
    }
  }
  throw CommandError("unterminated quote");
}

bool is_placeholder_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// Walks one word: literal text goes to on_text, each {name} to on_name. Throws on stray braces.
template <class OnText, class OnName>
void scan_word(std::string_view word, OnText on_text, OnName on_name) {
  const auto where = [&] { return " in '" + std::string(word) + "'"; };
  for (std::size_t i = 0; i < word.size();) {
    const char c = word[i];
    if ((c == '{' || c == '}') && i + 1 < word.size() && word[i + 1] == c) {
      on_text(word.substr(i, 1));
      i += 2;
    } else if (c == '}') {
      throw CommandError("unmatched '}'" + where());
    } else if (c == '{') {
      const std::size_t close = word.find('}', i + 1);
      if (close == std::string_view::npos) throw CommandError("unmatched '{'" + where());
      const std::string_view name = word.substr(i + 1, close - i - 1);
      if (name.empty() || !std::all_of(name.begin(), name.end(), is_placeholder_char))
        throw CommandError("bad placeholder {" + std::string(name) + "}" + where());
      on_name(name);
      i = close + 1;
    } else {
      const std::size_t next = std::min(word.find_first_of("{}", i), word.size());
      on_text(word.substr(i, next - i));
      i = next;
    }
  }
}

std::string known_names(const std::map<std::string, std::string, std::less<>>& values) {
  if (values.empty()) return "none";
  std::string names;
  for (const auto& entry : values) names += (names.empty() ? "" : ", ") + entry.first;
  return names;
}

}  // namespace

std::vector<std::string> split_command(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // separate from word.empty(): '' is a word of its own
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_separator(c)) {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
    } else if (c == '\\') {
      if (i + 1 == text.size()) throw CommandError("trailing backslash");
      if (text[++i] == '\n') continue;  // line continuation: joins, starts no word
      word += text[i];
      in_word = true;
    } else if (c == '\'') {
      const std::size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) throw CommandError("unterminated quote");
      word.append(text.substr(i + 1, close - i - 1));
      i = close;
      in_word = true;
    } else if (c == '"') {
      i = read_double_quoted(text, i, word);
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::vector<std::string> render_argv(
    std::string_view command_template,
    const std::map<std::string, std::string, std::less<>>& values) {
  std::vector<std::string> argv;
  for (const std::string& word : split_command(command_template)) {
    std::string rendered;
    scan_word(
        word, [&](std::string_view text) { rendered.append(text); },
        [&](std::string_view name) {
          const auto it = values.find(name);
          if (it == values.end())
            throw CommandError("unknown placeholder {" + std::string(name) +
                               "} (known: " + known_names(values) + ")");
          rendered.append(it->second);
        });
    argv.push_back(std::move(rendered));
  }
  if (argv.empty()) throw CommandError("empty command");
  return argv;
}

std::vector<std::string> placeholders(std::string_view command_template) {
  std::vector<std::string> names;
  for (const std::string& word : split_command(command_template))
    scan_word(
        word, [](std::string_view) {}, [&](std::string_view name) { names.emplace_back(name); });
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string render_text(std::string_view text, const std::map<std::string, std::string, std::less<>>& values) {
  std::string rendered;
  scan_word(
      text, [&](std::string_view literal) { rendered.append(literal); },
      [&](std::string_view name) {
        const auto it = values.find(name);
        if (it != values.end()) rendered.append(it->second);
        else rendered.append("{").append(name).append("}");
      });
  return rendered;
}

std::vector<std::string> text_placeholders(std::string_view text) {
  std::vector<std::string> names;
  scan_word(text, [](std::string_view) {}, [&](std::string_view name) { names.emplace_back(name); });
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

EnvLines render_env(const EnvLines& env, const std::map<std::string, std::string, std::less<>>& values) {
  EnvLines out;
  for (const auto& [name, value] : env) {
    std::string text;
    for (const auto& word : render_argv(value, values)) text += (text.empty() ? "" : " ") + word;
    out.emplace_back(name, std::move(text));
  }
  return out;
}

}  // namespace flotilla::jobs
