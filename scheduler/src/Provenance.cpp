// Provenance.cpp — probing the working directory and the toolchain once per run.
#include "Provenance.h"

#include <flotilla/jobs/Command.h>
#include <flotilla/jobs/Subprocess.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>

#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

namespace {

constexpr std::chrono::seconds kProbeTimeout{10};

std::vector<std::string> blank_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\n') ++j;
    if (j > i) tokens.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return tokens;
}

// Output of a probe; "" when it did not run or failed.
std::string probe(std::vector<std::string> argv, const std::filesystem::path& workdir) {
  jobs::SubprocessSpec spec;
  spec.argv = std::move(argv);
  spec.workdir = workdir;
  spec.timeout = kProbeTimeout;
  spec.stderr_to = jobs::SubprocessSpec::Output::to_stdout;  // some compilers print --version to stderr
  spec.capture_limit = 64 << 10;
  const auto result = jobs::run_subprocess(spec);
  return result.ok() ? result.out : std::string();
}

std::string trimmed(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

}  // namespace

bool is_compiler(std::string_view program) {
  const auto slash = program.rfind('/');
  const std::string name(slash == std::string_view::npos ? program : program.substr(slash + 1));
  static const std::regex compilers(
      R"((gcc|g\+\+|cc|c\+\+|clang|clang\+\+|nvcc|nvc|nvc\+\+|nvfortran|gfortran|icx|icpx|ifx|hipcc|mpicc|mpicxx|mpic\+\+|mpif90)(-[0-9]+(\.[0-9]+)*)?)");
  return std::regex_match(name, compilers);
}

std::vector<std::string> named_compilers(const std::vector<std::string>& command_templates,
                                         const std::vector<std::string>& scripts) {
  std::vector<std::string> found;
  const auto add = [&](const std::string& program) {
    if (is_compiler(program) && std::find(found.begin(), found.end(), program) == found.end())
      found.push_back(program);
  };
  for (const auto& command : command_templates) {
    if (command.empty()) continue;
    std::vector<std::string> words;
    try {
      words = jobs::split_command(command);
    } catch (const jobs::CommandError&) {
      continue;  // the settings check reports it
    }
    for (const auto& word : words)
      for (const auto& token : blank_tokens(word)) add(token);
  }
  for (const auto& text : scripts) {
    std::string spaced(text);
    for (char& c : spaced)
      if (std::string_view(";&|()<>=`\"'{}$").find(c) != std::string_view::npos) c = ' ';
    for (const auto& token : blank_tokens(spaced)) add(token);
  }
  return found;
}

std::vector<std::string> read_scripts(const std::vector<std::string>& command_templates,
                                      const std::filesystem::path& workdir) {
  constexpr std::uintmax_t kMaxScript = 64 << 10;
  std::vector<std::string> texts;
  std::vector<std::filesystem::path> seen;
  for (const auto& command : command_templates) {
    std::vector<std::string> words;
    try {
      words = jobs::split_command(command);
    } catch (const jobs::CommandError&) {
      continue;
    }
    // make reads its Makefile (in the folder after -C, else the working directory).
    std::vector<std::string> files = words;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (words[i] != "make" && words[i] != "gmake") continue;
      const auto dir = i + 2 < words.size() && words[i + 1] == "-C" ? words[i + 2] : std::string(".");
      for (const char* name : {"GNUmakefile", "makefile", "Makefile"}) files.push_back(dir + "/" + name);
    }
    for (const auto& word : files) {
      if (word.empty() || word.find('{') != std::string::npos) continue;  // a placeholder's value is not known here
      const auto path = (workdir / word).lexically_normal();  // an absolute word stays itself
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) > kMaxScript || ec ||
          std::find(seen.begin(), seen.end(), path) != seen.end())
        continue;
      seen.push_back(path);
      std::ifstream in(path, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.find('\0') == std::string::npos) texts.push_back(std::move(text));  // a program, not a script
    }
  }
  return texts;
}

std::string version_line(std::string_view program, std::string_view output) {
  std::string first;
  std::size_t start = 0;
  while (start < output.size()) {
    const auto end = std::min(output.find('\n', start), output.size());
    auto line = trimmed(output.substr(start, end - start));
    // nvcc's first line is its banner ("nvcc: NVIDIA (R) Cuda compiler driver"); the version is
    // on its "Cuda compilation tools, release 13.0, V13.0.48" line.
    if (program.ends_with("nvcc") && line.find("release ") != std::string::npos) return line;
    if (first.empty()) first = std::move(line);
    start = end + 1;
  }
  return first;
}

results::RunProvenance probe_provenance(const Settings& s, const std::vector<std::string>& command_templates) {
  results::RunProvenance p;
  p.workdir = s.workdir.string();
  if (const auto commit = trimmed(probe({"git", "-C", p.workdir, "rev-parse", "HEAD"}, s.workdir)); !commit.empty()) {
    p.git_commit = commit;
    // Uncommitted changes to tracked files; files git does not track are not part of the commit
    // either way, and build outputs would always count.
    // --no-optional-locks: plain `git status` refreshes the index under .git/index.lock, and a
    // flotilla killed at that moment would leave the user's repository locked.
    p.git_dirty = !trimmed(probe({"git", "--no-optional-locks", "-C", p.workdir, "status", "--porcelain",
                                  "--untracked-files=no"},
                                 s.workdir))
                       .empty();
  }
  // Named by a command or by a script one runs (a build.sh that calls nvcc): what the campaign
  // used. A compiler merely on PATH is not recorded.
  const auto programs = named_compilers(command_templates, read_scripts(command_templates, s.workdir));
  for (const auto& program : programs)
    if (auto line = version_line(program, probe({program, "--version"}, s.workdir)); !line.empty())
      p.tools.emplace_back(program, std::move(line));
  for (const auto* env : {&s.build_env, &s.explore_env, &s.evaluate_env})
    for (const auto& [name, value] : *env) p.env.push_back(name + "=" + value);
  return p;
}

}  // namespace flotilla::scheduler
