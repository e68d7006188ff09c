// PrivateDir.cpp — fresh mode-0700 folders for a backend's own files (PrivateDir.h).
#include "PrivateDir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace flotilla::jobs {

std::string parent_refusal(unsigned mode, unsigned owner, unsigned me) {
  if (!S_ISDIR(mode)) return "is not a folder";
  const bool others_write = (mode & (S_IWGRP | S_IWOTH)) != 0;
  if (owner != me && !(mode & S_ISVTX))
    return others_write ? fmt::format("is writable by others and belongs to uid {}, without the sticky bit", owner)
                        : fmt::format("belongs to uid {}, not to us (uid {})", owner, me);
  if (others_write && !(mode & S_ISVTX))
    return "is writable by other users without the sticky bit, so they could swap a folder of ours";
  return {};
}

std::filesystem::path make_private_dir(const std::filesystem::path& parent, std::string_view prefix) {
  std::error_code ec;
  if (!std::filesystem::exists(parent, ec)) {
    // Ours, and only ours: created 0700 whatever the umask.
    std::filesystem::create_directories(parent, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", parent.string(), ec.message()));
    ::chmod(parent.c_str(), 0700);
  }
  struct stat info {};
  if (::stat(parent.c_str(), &info) != 0)
    throw std::runtime_error(fmt::format("cannot use {}: {}", parent.string(), std::strerror(errno)));
  if (auto why = parent_refusal(info.st_mode, info.st_uid, ::geteuid()); !why.empty())
    throw std::runtime_error(fmt::format(
        "refusing to keep private files in {}: it {}; give a folder of your own (resources.jobs_dir)",
        parent.string(), why));
  std::string pattern = (parent / fmt::format("{}-{}-XXXXXX", prefix, ::getpid())).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error(fmt::format("cannot create a private folder in {}: {}", parent.string(),
                                         std::strerror(errno)));
  return pattern;
}

std::size_t remove_stale_private_dirs(const std::filesystem::path& parent, std::string_view prefix) {
  std::vector<std::filesystem::path> stale;  // collected first: no removal while the folder is read
  std::error_code ec;
  const std::string head = std::string(prefix) + "-";
  for (std::filesystem::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(head)) continue;
    const auto rest = std::string_view(name).substr(head.size());
    long pid = 0;
    const auto [after, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (error != std::errc{} || pid <= 0 || after == rest.data() + rest.size() || *after != '-') continue;
    struct stat info {};
    if (::lstat(it->path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // its run is alive (or not ours to ask)
    stale.push_back(it->path());
  }
  std::size_t removed = 0;
  for (const auto& dir : stale) {
    std::error_code ignored;
    if (std::filesystem::remove_all(dir, ignored) > 0) ++removed;
  }
  return removed;
}

}  // namespace flotilla::jobs
