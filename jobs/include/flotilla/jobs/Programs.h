// Programs.h — where flotilla finds the programs it starts, and where it is installed: the one
// program-lookup rule (every argv[0] of a task or helper, flotilla-worker for the mpi backend,
// flotilla and flotilla-worker for Slurm jobs) and the one reading of /proc/self/exe.
//
// The rule is execvp's, done before the child starts (in the parent: execvp is not
// async-signal-safe, and it would search the scheduler's PATH, not the child's): a name holding a
// '/' is used as it is; otherwise each folder of the search list in turn, the first regular file
// this user may execute wins; a folder that only has a non-executable file of that name makes the
// error EACCES rather than ENOENT, as execvp does. An empty entry of the list means ".".
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace flotilla::jobs {

// The folder the running executable lives in (/proc/self/exe's), where flotilla-worker,
// flotilla-kernel and the other programs installed beside it are; empty when it cannot be read.
std::filesystem::path install_dir();
// The running executable itself (/proc/self/exe); empty when it cannot be read.
std::filesystem::path self_executable();

// A search list: the prepended folders, then `path` (a PATH value), separated by ':'; with an
// empty `path`, the prepended folders alone.
std::string search_path(const std::vector<std::filesystem::path>& prepend, std::string_view path);
// This process's PATH, or "/usr/local/bin:/usr/bin:/bin" when it has none.
std::string inherited_path();

// `name` looked up on `path` (a search list) by the rule above. A relative folder (or ".") is
// relative to `workdir` when one is given (the child's), else to the current folder. Returns the
// path to exec as found ("DIR/NAME", relative when DIR is), or the errno exec would give.
std::variant<std::string, int> find_program(std::string_view name, std::string_view path,
                                            const std::filesystem::path& workdir = {});

// find_program's path made absolute; empty when not found.
std::filesystem::path find_program_path(std::string_view name, std::string_view path);

}  // namespace flotilla::jobs
