// BuildInputs.cpp — the digest of build.inputs and a build folder's owner (BuildInputs.h).
#include "BuildInputs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace flotilla::scheduler {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxFiles = 100'000;
constexpr std::uintmax_t kMaxBytes = 4ULL << 30;

struct Digest {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  std::size_t files = 0;
  std::uintmax_t bytes = 0;
  void add(std::string_view text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 0x100000001b3ULL;
    }
  }
};

void add_file(Digest& d, const fs::path& path, const std::string& name) {
  if (++d.files > kMaxFiles)
    throw std::runtime_error(fmt::format("more than {} files (at {}); list the sources the build reads", kMaxFiles, name));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}: {}", name, std::strerror(errno)));
  d.add(fmt::format("file {}\n", name));
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    d.bytes += static_cast<std::uintmax_t>(in.gcount());
    if (d.bytes > kMaxBytes)
      throw std::runtime_error(fmt::format("more than 4 GiB (at {}); list the sources the build reads", name));
    d.add({buffer, static_cast<std::size_t>(in.gcount())});
  }
  d.add("\n");
}

void add_path(Digest& d, const fs::path& workdir, const fs::path& path, const std::string& name) {
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) throw std::runtime_error(fmt::format("'{}' does not exist", name));
  if (fs::is_symlink(status)) {
    d.add(fmt::format("link {} -> {}\n", name, fs::read_symlink(path, ec).string()));
  } else if (fs::is_directory(status)) {
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    if (ec) throw std::runtime_error(fmt::format("cannot list {}: {}", name, ec.message()));
    std::sort(entries.begin(), entries.end());
    d.add(fmt::format("folder {}\n", name));
    for (const auto& entry : entries) add_path(d, workdir, entry, name + "/" + entry.filename().string());
  } else if (fs::is_regular_file(status)) {
    add_file(d, path, name);
  } else {
    throw std::runtime_error(fmt::format("'{}' is not a file, a folder or a link", name));
  }
}

}  // namespace

std::string digest_build_inputs(const fs::path& workdir, const std::vector<std::string>& paths) {
  Digest d;
  for (const auto& p : paths) {
    const fs::path path = fs::path(p).is_absolute() ? fs::path(p) : workdir / p;
    add_path(d, workdir, path, fs::path(p).lexically_normal().string());
  }
  return fmt::format("{:016x}", d.hash);
}

void claim_build_root(const fs::path& build_root, const std::string& campaign) {
  std::error_code ec;
  fs::create_directories(build_root, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create the build folder {}: {}", build_root.string(), ec.message()));
  const auto owner = build_root / ".flotilla-campaign";
  // Written whole under another name, then linked: a second campaign starting at the same
  // moment either loses the link (and reads a whole owner file) or finds ours.
  const auto draft = build_root / fmt::format(".flotilla-campaign.{}", ::getpid());
  {
    std::ofstream out(draft, std::ios::binary | std::ios::trunc);
    out << campaign << '\n';
    if (!out.flush()) throw std::runtime_error(fmt::format("cannot write {}", draft.string()));
  }
  const int linked = ::link(draft.c_str(), owner.c_str());
  const int link_error = errno;
  fs::remove(draft, ec);
  if (linked == 0) return;
  if (link_error != EEXIST)
    throw std::runtime_error(fmt::format("cannot write {}: {}", owner.string(), std::strerror(link_error)));
  std::ifstream in(owner, std::ios::binary);
  std::string recorded;
  std::getline(in, recorded);
  if (recorded == campaign) return;
  throw std::runtime_error(fmt::format(
      "the build folder {} belongs to another campaign ({}): two campaigns building there would overwrite each "
      "other's builds; give this one its own [build] dir, or remove that folder if its campaign is gone",
      build_root.string(), recorded.empty() ? "unnamed" : recorded));
}

}  // namespace flotilla::scheduler
