// Progress.h — the live progress line of `flotilla run` on stderr.
// On a terminal one line is rewritten in place; otherwise a plain line is printed at most every
// few seconds and at each round's end, so CI logs stay readable.
#pragma once

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>

namespace flotilla::scheduler {

struct ProgressState {
  int round = 0;
  std::string phase;             // "explore" or "evaluate"
  std::size_t explored = 0;      // candidates other than the baseline
  std::size_t budget = 0;
  std::size_t running = 0;
  std::size_t queued = 0;
  std::size_t failed_trials = 0;
  std::size_t verified = 0;
  std::size_t rolled_back = 0;
  std::optional<double> best;    // best verified objective
  std::string objective;
};

class Progress {
 public:
  Progress(std::ostream& err, bool live) : m_err(err), m_live(live) {}
  void update(const ProgressState& state, bool force = false);
  void finish();                 // ends a live line so later output starts on a new line
  void note(const std::string& line);  // a line of its own; a live line is redrawn at the next update

 private:
  std::ostream& m_err;
  bool m_live;
  bool m_dirty = false;
  std::chrono::steady_clock::time_point m_last{};
};

}  // namespace flotilla::scheduler
