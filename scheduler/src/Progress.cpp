#include "Progress.h"

#include <ostream>

#include <fmt/format.h>

namespace flotilla::scheduler {

void Progress::update(const ProgressState& s, bool force) {
  auto now = std::chrono::steady_clock::now();
  auto interval = m_live ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  if (!force && now - m_last < interval) return;
  m_last = now;
  auto line = fmt::format("round {} {:<8} {}/{} candidates · {} running · {} queued · {} verified · {} rolled back · "
                          "{} failed trials · best {}",
                          s.round, s.phase, s.explored, s.budget, s.running, s.queued, s.verified, s.rolled_back,
                          s.failed_trials, s.best ? fmt::format("{} {:.4g}", s.objective, *s.best) : "-");
  if (m_live) {
    m_err << "\r\033[K" << line << std::flush;
    m_dirty = true;
  } else {
    m_err << line << '\n' << std::flush;
  }
}

void Progress::finish() {
  if (m_live && m_dirty) m_err << '\n' << std::flush;
  m_dirty = false;
}

void Progress::note(const std::string& line) {
  if (m_live && m_dirty) m_err << "\r\033[K";
  m_err << line << '\n' << std::flush;
  m_dirty = false;
  m_last = {};  // redraw the live line at the next update
}

}  // namespace flotilla::scheduler
