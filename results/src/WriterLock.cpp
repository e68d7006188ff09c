// WriterLock.cpp — an open-file-description (OFD) byte-range lock on the campaign file.
//
// Why OFD locks: they belong to the open file description, not the process, so HDF5 closing
// its own descriptors for the same file (which drops classic POSIX fcntl locks) cannot release
// ours, and two Stores in one process exclude each other too. On local Linux file systems they
// are independent of the flock() that HDF5 takes itself. Readers never look at this lock.
// The locked byte lies far beyond any real data, so nothing the file contains is covered.
#include "WriterLock.h"

#include <flotilla/results/Store.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <utility>

namespace flotilla::results {

namespace {

constexpr off_t kLockOffset = off_t{1} << 62;

bool locking_unsupported(int error) {
  return error == ENOLCK || error == ENOSYS || error == EOPNOTSUPP || error == EINVAL;
}

}  // namespace

WriterLock WriterLock::acquire(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    throw StoreError(path.string() + ": cannot open for writing: " + std::strerror(errno));
  }
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = kLockOffset;
  lock.l_len = 1;
  // A writer that was just SIGKILLed holds its lock until the kernel has closed its files, which
  // can take a moment after kill(2) returns (a resume 20 ms after the kill was refused): a held
  // lock is tried again for a second before it is taken for a live writer.
  int error = 0;
  for (int tries = 0;; ++tries) {
    if (::fcntl(fd, F_OFD_SETLK, &lock) == 0) return WriterLock(fd);
    error = errno;
    if ((error != EAGAIN && error != EACCES) || tries == 50) break;
    ::usleep(20'000);
  }
  ::close(fd);
  // A file system without byte-range locks: carry on unguarded, as HDF5 itself does when
  // HDF5_USE_FILE_LOCKING=FALSE; the lock is a safety net, not part of the file format.
  if (locking_unsupported(error)) return WriterLock();
  if (error == EAGAIN || error == EACCES) {
    throw StoreError(path.string() + ": is open for writing by another process (another `flotilla run` of this "
                     "campaign?): wait for it to finish, or stop it, then run the same command again");
  }
  throw StoreError(path.string() + ": cannot lock for writing: " + std::strerror(error));
}

bool WriterLock::is_held(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = kLockOffset;
  lock.l_len = 1;
  const bool held = ::fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

WriterLock::WriterLock(WriterLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = std::exchange(other.m_fd, -1);
  }
  return *this;
}

WriterLock::~WriterLock() {
  if (m_fd >= 0) ::close(m_fd);   // closing the last descriptor releases the OFD lock
}

}  // namespace flotilla::results
