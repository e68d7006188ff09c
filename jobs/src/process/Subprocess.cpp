// Subprocess.cpp — start a helper program, feed and read it, bound it by a timeout (Subprocess.h).
#include "flotilla/jobs/Subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "Outcome.h"
#include "Process.h"

namespace flotilla::jobs {
namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  Fd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  return {Fd(fds[0]), Fd(fds[1])};
}

Fd open_output(const std::filesystem::path& path, bool append) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  return Fd(fd);
}

// What is kept of one captured stream: its first `limit` bytes, or with `tail` its last ones.
// The tail is held in at most twice `limit` bytes: the front is dropped in one move only when
// the text reaches that, so each byte is moved at most once however much the child writes.
class Capture {
 public:
  Capture(std::string& text, std::size_t limit, bool tail) : m_text(text), m_limit(limit), m_tail(tail) {}

  void add(const char* data, std::size_t n) {
    if (!m_tail) {
      const std::size_t room = m_text.size() < m_limit ? m_limit - m_text.size() : 0;
      m_text.append(data, std::min(room, n));
      m_dropped += n - std::min(room, n);
      return;
    }
    m_text.append(data, n);
    if (m_text.size() > 2 * m_limit) drop_front(m_text.size() - m_limit);
  }

  // Says what was dropped, where it was: at the end of a head, before a tail.
  void finish() {
    if (m_tail && m_text.size() > m_limit) drop_front(m_text.size() - m_limit);
    if (m_dropped == 0) return;
    if (!m_tail)
      m_text += "\n[flotilla: output cut at " + std::to_string(m_limit) + " bytes]\n";
    else
      m_text.insert(0, "[flotilla: output cut: the first " + std::to_string(m_dropped) + " bytes dropped, the last " +
                           std::to_string(m_text.size()) + " kept]\n");
  }

 private:
  void drop_front(std::size_t n) {
    m_text.erase(0, n);
    m_dropped += n;
  }
  std::string& m_text;
  std::size_t m_limit;
  bool m_tail;
  std::size_t m_dropped = 0;
};

// Reads what is there into `capture`; false at end of file.
bool drain(Fd& fd, Capture& capture) {
  std::array<char, 65536> buffer;
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n > 0) {
      capture.add(buffer.data(), static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    fd.reset();
    return false;
  }
}

void set_nonblocking(const Fd& fd) { ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK); }

}  // namespace

std::string SubprocessResult::describe(std::chrono::milliseconds timeout) const {
  if (!started) return error;
  if (timed_out) return "timed out after " + format_duration(timeout);
  if (exit_code > 128) return "killed by signal " + describe_signal(exit_code - 128);
  return "exit code " + std::to_string(exit_code);
}

SubprocessResult run_subprocess(const SubprocessSpec& s) {
  using Output = SubprocessSpec::Output;
  SubprocessResult result;
  Pipe in, out, err;
  Fd out_file, err_file;
  ChildIo io;
  if (!s.input.empty()) {
    in = make_pipe();
    io.in = in.read.get();
  }
  const auto output = [&](Output to, const std::filesystem::path& file, Pipe& pipe, Fd& opened) {
    if (to == Output::capture) {
      pipe = make_pipe();
      return pipe.write.get();
    }
    if (to == Output::file || to == Output::append) {
      opened = open_output(file, to == Output::append);
      if (!opened) throw std::runtime_error(file.string() + ": cannot open for the output of " + s.argv.at(0) + ": " +
                                            std::strerror(errno));
      return opened.get();
    }
    return -1;
  };
  io.out = s.stdout_to == Output::inherit ? STDOUT_FILENO : output(s.stdout_to, s.stdout_file, out, out_file);
  io.err = s.stderr_to == Output::to_stdout ? io.out
           : s.stderr_to == Output::inherit ? STDERR_FILENO
                                            : output(s.stderr_to, s.stderr_file, err, err_file);
  TaskSpec spec{.argv = s.argv, .env = s.env, .workdir = s.workdir};
  const Spawner spawner(s.path_prepend);
  auto started = spawner.start(spec, io, !s.outlives_us, s.outlives_us);
  in.read.reset();
  out.write.reset();
  err.write.reset();
  if (auto* failure = std::get_if<SpawnFailure>(&started)) {
    result.error = failure->reason;
    result.exit_code = failure->exit_code;
    return result;
  }
  result.started = true;
  result.pid = std::get<pid_t>(started);
  const auto deadline = Clock::now() + s.timeout;
  std::size_t written = 0;
  Capture out_capture(result.out, s.capture_limit, s.capture_tail);
  Capture err_capture(result.err, s.capture_limit, s.capture_tail);
  for (Fd* fd : {&in.write, &out.read, &err.read})
    if (*fd) set_nonblocking(*fd);
  if (in.write && s.input.empty()) in.write.reset();
  while (in.write || out.read || err.read) {
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    if (out.read) fds[n++] = {out.read.get(), POLLIN, 0};
    if (err.read) fds[n++] = {err.read.get(), POLLIN, 0};
    if (in.write) fds[n++] = {in.write.get(), POLLOUT, 0};
    int wait_ms = -1;
    if (s.timeout.count() > 0) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        result.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    if (::poll(fds.data(), n, wait_ms) < 0 && errno != EINTR) break;
    if (out.read && !drain(out.read, out_capture)) out.read.reset();
    if (err.read && !drain(err.read, err_capture)) err.read.reset();
    if (in.write) {
      const ssize_t w = ::write(in.write.get(), s.input.data() + written, s.input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == s.input.size()) in.write.reset();
    }
  }
  // A child that closed its output but has not exited yet still counts against the timeout.
  // The group is signalled only while its leader is unreaped, so its pid cannot be another's.
  for (;;) {
    if (!result.timed_out && s.timeout.count() > 0 && Clock::now() >= deadline) result.timed_out = true;
    if (result.timed_out || has_exited(result.pid)) break;
    ::usleep(2000);
  }
  if (result.timed_out || !s.outlives_us) kill_group(result.pid);  // the timeout, or what it left in its group
  const int status = wait_blocking(result.pid);
  result.wait_status = status;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  out_capture.finish();
  err_capture.finish();
  return result;
}

}  // namespace flotilla::jobs
