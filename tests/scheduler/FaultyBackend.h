// FaultyBackend.h — a backend that runs nothing and misbehaves on purpose, for unit tests of the
// campaign loop (campaign_test.cpp).
//
// Each task's result comes from a pure function of its argv (the test's "benchmark"), so a
// campaign over it is deterministic; faults come from a seed, each with its own probability:
//   lose       the task comes back lost (its executor died): the campaign re-queues it
//   refuse     the "submission" fails: every task of that submit() comes back lost
//   kill_job   a whole "job" (the tasks of one submit()) is lost at once
//   duplicate  the result comes back twice (a job file ingested again after a restart)
//   delay      the result waits 1..4 collect() calls; results come back in any order (reorder)
// It keeps the Backend contract the campaign relies on (a task counts in queued() + running()
// until its result is returned) except for duplicates, which are the point: a second copy is
// returned after the first, so the campaign must record it once.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "flotilla/jobs/Backend.h"

namespace flotilla::scheduler::test {

struct Faults {
  double lose = 0, refuse = 0, kill_job = 0, duplicate = 0, delay = 0;
  std::uint64_t seed = 1;
};

struct FaultCounts {
  int lost = 0, refused = 0, killed = 0, duplicated = 0, delayed = 0, results = 0;
  int total() const { return lost + refused + killed + duplicated + delayed; }
};

class FaultyBackend final : public jobs::Backend {
 public:
  using Run = std::function<jobs::TaskResult(const jobs::TaskSpec&)>;

  // `capabilities`: what the backend says it can do, so the campaign takes the paths a real
  // backend with them takes (a Slurm-like one: dependencies, work that outlives the scheduler;
  // the pipelined round of gate = all then runs under faults too).
  FaultyBackend(Run run, Faults faults, FaultCounts* counts, jobs::BackendCapabilities capabilities = {})
      : m_run(std::move(run)), m_faults(faults), m_counts(counts), m_rng(faults.seed), m_capabilities(capabilities) {}

  std::string_view name() const override { return "faulty"; }
  jobs::BackendCapabilities capabilities() const override { return m_capabilities; }

  void submit(std::vector<jobs::TaskSpec> tasks) override {
    const bool refused = chance(m_faults.refuse);
    const bool killed = !refused && chance(m_faults.kill_job);
    if (refused) ++m_counts->refused;
    if (killed) ++m_counts->killed;
    for (auto& spec : tasks) {
      jobs::TaskResult r;
      if (refused || killed || chance(m_faults.lose)) {
        if (!refused && !killed) ++m_counts->lost;
        r = lost(spec, refused ? "submission refused" : killed ? "its job was killed" : "its rank died");
      } else {
        r = m_run(spec);
        r.id = spec.id;
        r.attempt = spec.attempt;
      }
      int wait = 0;
      if (chance(m_faults.delay)) {
        ++m_counts->delayed;
        wait = 1 + static_cast<int>(m_rng() % 4);
      }
      m_waiting.push_back({std::move(r), wait, false});
    }
  }

  std::vector<jobs::TaskResult> collect(std::chrono::milliseconds) override {
    std::vector<jobs::TaskResult> out;
    std::vector<Waiting> still;
    // Reorder: the waiting results are visited in a shuffled order.
    std::shuffle(m_waiting.begin(), m_waiting.end(), m_rng);
    for (auto& w : m_waiting) {
      if (w.wait-- > 0) {
        still.push_back(std::move(w));
        continue;
      }
      out.push_back(w.result);
      ++m_counts->results;
      if (!w.copy && w.result.status != jobs::TaskStatus::lost && chance(m_faults.duplicate)) {
        ++m_counts->duplicated;
        m_duplicates.push_back(w.result);
      }
    }
    m_waiting = std::move(still);
    // A duplicate arrives after its original, at a later collect, uncounted by queued().
    if (!m_duplicates.empty() && out.empty()) {
      out.push_back(std::move(m_duplicates.front()));
      m_duplicates.pop_front();
    }
    return out;
  }

  std::size_t queued() const override { return 0; }
  std::size_t running() const override { return m_waiting.size(); }
  void cancel_all() override {
    for (auto& w : m_waiting) {
      w.result.status = jobs::TaskStatus::cancelled;
      w.wait = 0;
    }
  }

 private:
  struct Waiting {
    jobs::TaskResult result;
    int wait = 0;
    bool copy = false;
  };

  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(m_rng) < p; }

  static jobs::TaskResult lost(const jobs::TaskSpec& spec, const char* why) {
    jobs::TaskResult r;
    r.id = spec.id;
    r.attempt = spec.attempt;
    r.status = jobs::TaskStatus::lost;
    r.reason = why;
    return r;
  }

  Run m_run;
  Faults m_faults;
  FaultCounts* m_counts;
  std::mt19937_64 m_rng;
  jobs::BackendCapabilities m_capabilities;
  std::vector<Waiting> m_waiting;
  std::deque<jobs::TaskResult> m_duplicates;
};

}  // namespace flotilla::scheduler::test
