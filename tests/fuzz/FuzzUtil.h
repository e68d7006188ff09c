// FuzzUtil.h — what the fuzz targets share (docs/verification.md).
//
// Each target feeds one parser of outside input and catches only the error types that parser
// documents; anything else that escapes (another exception, a crash, a sanitizer report, a leak,
// a run longer than libFuzzer's -timeout) is a finding. Invariants a target checks beyond "no
// crash" abort through FUZZ_CHECK with the broken rule, so libFuzzer saves the input.
// Parsers that need a path get a scratch file in /dev/shm private to the process (pid in the
// name), rewritten for every input and removed at exit.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace flotilla::fuzz {

#define FUZZ_CHECK(condition, what)                                                        \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s\n", __FILE__, __LINE__, what); \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// /dev/shm/flotilla-fuzz-PID/NAME (a tmpfs: no disk I/O per input); the folder goes at exit.
class ScratchFile {
 public:
  explicit ScratchFile(std::string_view name) {
    m_dir = std::filesystem::path("/dev/shm") / ("flotilla-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(m_dir);
    m_path = m_dir / name;
  }
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove_all(m_dir, ignored);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's contents with `bytes` and returns its path.
  const std::filesystem::path& write(std::string_view bytes) const {
    std::ofstream out(m_path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    FUZZ_CHECK(out.good(), "cannot write the scratch file in /dev/shm");
    return m_path;
  }
  const std::filesystem::path& path() const { return m_path; }
  const std::filesystem::path& dir() const { return m_dir; }

 private:
  std::filesystem::path m_dir;
  std::filesystem::path m_path;
};

inline bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

}  // namespace flotilla::fuzz
