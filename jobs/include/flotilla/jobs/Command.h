// Command.h — turns a command template from a campaign file into an argv.
//
// The template is split into words like a POSIX shell does for quoting ('…', "…", backslash) but
// nothing else: no globbing, variables, pipes or redirection. Then every "{name}" in a word is
// replaced by that value; a substituted value never splits or joins words, so a value such as
// "a b; rm -rf /" stays one argument. "{{" and "}}" stand for literal braces.
#pragma once

#include <map>
#include <utility>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::jobs {

// Errors name the problem, e.g. "unknown placeholder {tile_z} (known: shard, shards, tile_x)"
// or "unterminated quote".
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split_command(std::string_view command_template);
std::vector<std::string> render_argv(std::string_view command_template,
                                     const std::map<std::string, std::string, std::less<>>& values);
// Placeholder names used in a template, sorted and unique (to validate a config early).
std::vector<std::string> placeholders(std::string_view command_template);

// A plain text with placeholders, no words or quotes: a choice's value (`[space] param = db:
// enum: file={tmpdir}/test.db`). Each {name} that `values` holds is replaced once, and the result
// is never read again; one it lacks stays as written (flotilla-per-file fills {file} and
// {tmpdir} per file). {{ and }} are literal braces, as in a command.
std::string render_text(std::string_view text, const std::map<std::string, std::string, std::less<>>& values);
// Placeholder names in such a text, sorted and unique.
std::vector<std::string> text_placeholders(std::string_view text);

// `env = NAME=TEMPLATE` lines with a task's values: each TEMPLATE rendered as a command is
// (quotes group, no shell) and its words joined by one blank.
using EnvLines = std::vector<std::pair<std::string, std::string>>;
EnvLines render_env(const EnvLines& env, const std::map<std::string, std::string, std::less<>>& values);

}  // namespace flotilla::jobs
