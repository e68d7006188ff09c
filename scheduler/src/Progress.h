// Progress.h — the progress line of `flotilla run` on stderr (what it says: ProgressLine.h).
// On a terminal one line is rewritten in place, fitted to the terminal's width, which is read
// again after a SIGWINCH; otherwise one plain line is printed at each round's end, so CI logs
// and files stay readable.
#pragma once

#include <signal.h>

#include <chrono>
#include <iosfwd>
#include <string>

#include "ProgressLine.h"
#include "flotilla/scheduler/Terminal.h"

namespace flotilla::scheduler {

class Progress {
 public:
  // live: stderr is a terminal; installs a SIGWINCH handler for as long as this object lives.
  Progress(std::ostream& err, bool live);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Live only: redraws the line, at most every 100 ms unless forced or the terminal was resized.
  void update(const ProgressState& state, bool force = false);
  // Whether update(state, force) would draw now: the caller builds the state (a summary of every
  // trial recorded) only then, not at each task that comes back.
  bool due(bool force = false) const;
  // Live: redraws the line now; without a terminal: the round's one plain line.
  void round_end(const ProgressState& state);
  // Ends a live line, so later output starts on a new line.
  void finish();
  // A line of its own; a live line is redrawn at the next update.
  void note(const std::string& line);

 private:
  void draw(const ProgressState& state);

  std::ostream& m_err;
  bool m_live;
  int m_width = 80;
  bool m_dirty = false;
  std::chrono::steady_clock::time_point m_started = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point m_last{};
  struct sigaction m_previous_winch {};  // restored when this object goes
};

}  // namespace flotilla::scheduler
