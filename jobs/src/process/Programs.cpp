// Programs.cpp — the program-lookup rule and the install folder (Programs.h).
#include "flotilla/jobs/Programs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace flotilla::jobs {

std::filesystem::path self_executable() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self;
}

std::filesystem::path install_dir() { return self_executable().parent_path(); }

std::string search_path(const std::vector<std::filesystem::path>& prepend, std::string_view path) {
  std::string list;
  for (std::size_t i = 0; i < prepend.size(); ++i) list += (i == 0 ? "" : ":") + prepend[i].string();
  if (prepend.empty()) return std::string(path);
  return path.empty() ? list : list + ":" + std::string(path);
}

std::string inherited_path() {
  const char* path = std::getenv("PATH");
  return path ? path : "/usr/local/bin:/usr/bin:/bin";
}

std::variant<std::string, int> find_program(std::string_view name, std::string_view path,
                                            const std::filesystem::path& workdir) {
  if (name.find('/') != std::string_view::npos) return std::string(name);  // the child's execve reports errors
  if (name.empty()) return ENOENT;
  int error = ENOENT;
  for (std::size_t begin = 0; begin <= path.size();) {
    std::size_t end = path.find(':', begin);
    if (end == std::string_view::npos) end = path.size();
    const std::string dir = end == begin ? "." : std::string(path.substr(begin, end - begin));
    begin = end + 1;
    const std::string candidate = dir + "/" + std::string(name);
    const std::string probe = candidate.front() != '/' && !workdir.empty() ? (workdir / candidate).string() : candidate;
    struct stat info {};
    if (::stat(probe.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    if (::access(probe.c_str(), X_OK) == 0) return candidate;
    error = EACCES;  // like execvp: remember, but a later folder may still have it
  }
  return error;
}

std::filesystem::path find_program_path(std::string_view name, std::string_view path) {
  const auto found = find_program(name, path);
  if (const auto* text = std::get_if<std::string>(&found)) return std::filesystem::absolute(*text);
  return {};
}

}  // namespace flotilla::jobs
