/* fail_writes.c — LD_PRELOAD shim that makes writes to one file fail, as a dying disk would.
 *
 * FLOTILLA_FAIL_PATH=SUBSTRING  the file(s) whose writes fail: any fd whose /proc/self/fd link
 *                                contains SUBSTRING
 * FLOTILLA_FAIL_AFTER=N          let the first N writes to them through, then fail every one
 * FLOTILLA_FAIL_ERRNO=E          the errno they fail with (default 5, EIO)
 * Only pwrite/pwrite64/write are intercepted: what HDF5's sec2 driver uses. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static long passed = 0;

static int targeted(int fd) {
  const char* path = getenv("FLOTILLA_FAIL_PATH");
  if (!path || !*path) return 0;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  return strstr(target, path) != NULL;
}

static int should_fail(int fd) {
  if (!targeted(fd)) return 0;
  const char* after = getenv("FLOTILLA_FAIL_AFTER");
  if (passed < (after ? atol(after) : 0)) {
    ++passed;
    return 0;
  }
  const char* e = getenv("FLOTILLA_FAIL_ERRNO");
  errno = e ? atoi(e) : EIO;
  return 1;
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t) = NULL;
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  if (should_fail(fd)) return -1;
  return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t) = NULL;
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
  if (should_fail(fd)) return -1;
  return real(fd, buf, count, offset);
}

ssize_t write(int fd, const void* buf, size_t count) {
  static ssize_t (*real)(int, const void*, size_t) = NULL;
  if (!real) real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  if (should_fail(fd)) return -1;
  return real(fd, buf, count);
}
