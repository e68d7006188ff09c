// Provenance.h — what the scheduler records of a run besides its settings (results/Provenance.h):
// the working directory, its git commit and dirty state, the versions of the compilers the
// campaign's commands name, directly or in a script they run, and the env names given. Only
// those: a compiler on PATH that no command names (nvcc on a GPU host) is not the campaign's.
// The choice of programs is pure; probe_provenance runs them (git, PROGRAM --version), each
// with a timeout, and a probe that fails only leaves its fact out.
#pragma once

#include <flotilla/results/Provenance.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::scheduler {

struct Settings;

// "g++", "clang++-16", "/usr/bin/gcc-12", "nvcc", "mpicxx", "icpx", ...: a compiler whose
// --version prints its version and does nothing else. Only such programs are ever run.
bool is_compiler(std::string_view program);
// The compilers the command templates name, in order, once each: the first word of a command,
// and any blank-separated token of a word (a `sh -c 'g++ ...'` script); then those the texts of
// the scripts the commands run name (`scripts`: their contents), any token between blanks and
// shell punctuation (`CXX=g++`, `$(nvcc ...)`, `exec c++`).
std::vector<std::string> named_compilers(const std::vector<std::string>& command_templates,
                                         const std::vector<std::string>& scripts = {});
// The scripts a command runs: each word of the templates (as split) that names a regular file,
// relative to `workdir` or absolute, of text (no NUL byte) and at most 64 KiB, and the Makefile
// of a `make [-C DIR]`; their contents.
std::vector<std::string> read_scripts(const std::vector<std::string>& command_templates,
                                      const std::filesystem::path& workdir);
// The line of PROGRAM --version's output that names the version, trimmed: the first non-blank
// one, for nvcc its "release" line; "" when there is none.
std::string version_line(std::string_view program, std::string_view output);

// The commands whose compilers are recorded: explore, evaluate and (once there is one) build.
results::RunProvenance probe_provenance(const Settings& settings, const std::vector<std::string>& command_templates);

}  // namespace flotilla::scheduler
