// Progress.cpp — the terminal side of the progress line: its width (TIOCGWINSZ on stderr, read
// again after SIGWINCH), rewriting it in place, and the plain per-round lines without a terminal.
#include "Progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <ostream>

#include "flotilla/results/Printable.h"

namespace flotilla::scheduler {
namespace {

// Set by the handler, read by the next update: a handler may only touch a lock-free atomic.
std::atomic<bool> g_resized{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_resize(int) { g_resized = true; }

// The terminal's columns; 80 when stderr says none (a terminal that reports 0, or a pipe).
int terminal_width() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

int stdout_columns() {
  winsize size{};
  if (::isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) return size.ws_col;
  return 0;
}

Progress::Progress(std::ostream& err, bool live) : m_err(err), m_live(live) {
  if (!m_live) return;
  m_width = terminal_width();
  struct sigaction sa {};
  sa.sa_handler = on_resize;
  sa.sa_flags = SA_RESTART;  // a resize must not fail the read or write it interrupts
  sigemptyset(&sa.sa_mask);
  sigaction(SIGWINCH, &sa, &m_previous_winch);
}

Progress::~Progress() {
  if (m_live) sigaction(SIGWINCH, &m_previous_winch, nullptr);
}

void Progress::draw(const ProgressState& state) {
  if (g_resized.exchange(false)) m_width = terminal_width();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - m_started;
  // \r and erase-to-end: the line fits in one row, so this erases all of the previous one.
  m_err << "\r\033[K" << format_progress(state, m_width, elapsed) << std::flush;
  m_dirty = true;
}

bool Progress::due(bool force) const {
  if (!m_live) return false;
  return force || g_resized || std::chrono::steady_clock::now() - m_last >= std::chrono::milliseconds(100);
}

void Progress::update(const ProgressState& state, bool force) {
  if (!due(force)) return;
  m_last = std::chrono::steady_clock::now();
  draw(state);
}

void Progress::round_end(const ProgressState& state) {
  if (m_live) {
    m_last = std::chrono::steady_clock::now();
    draw(state);
    return;
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - m_started;
  m_err << format_progress(state, 0, elapsed) << '\n' << std::flush;
}

void Progress::finish() {
  if (m_live && m_dirty) m_err << '\n' << std::flush;
  m_dirty = false;
}

void Progress::note(const std::string& line) {
  if (m_live && m_dirty) m_err << "\r\033[K";
  // Notes quote task output (Printable.h); on a terminal they are broken on words to its width.
  m_err << (m_live ? wrap_note(results::printable(line), m_width) : results::printable(line)) << '\n' << std::flush;
  m_dirty = false;
  m_last = {};  // redraw the live line at the next update
}

}  // namespace flotilla::scheduler
