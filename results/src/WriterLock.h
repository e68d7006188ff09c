// WriterLock.h — at most one flotilla writer per campaign file, across processes.
//
// Why it exists: an HDF5 1.10 SWMR writer drops its flock() once H5Fstart_swmr_write has
// marked the superblock, and the only way to reopen a file whose writer was SIGKILLed clears
// that mark (see Store.cpp). So without a lock of our own, open_for_append could not tell a
// crashed writer from a live one and would let two processes write the same file.
//
// Invariant: while a WriterLock for a file exists, no other WriterLock for it can be acquired,
// in this or any other process; the kernel drops it when the process dies, however it dies.
#pragma once

#include <filesystem>

namespace flotilla::results {

class WriterLock {
 public:
  // Throws StoreError "<path>: is open for writing by another process" if the lock is held.
  static WriterLock acquire(const std::filesystem::path& path);
  // True when some process holds the lock now. Only tests (F_OFD_GETLK): never takes it, so a
  // reader asking cannot make a starting writer fail.
  static bool is_held(const std::filesystem::path& path);

  WriterLock() = default;
  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();

 private:
  explicit WriterLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

}  // namespace flotilla::results
