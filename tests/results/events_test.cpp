// Events about one candidate (Events.h): what a resumed campaign reads back of its decisions.
#include <flotilla/results/Events.h>
#include <gtest/gtest.h>

using namespace flotilla::results;

TEST(Events, ACandidateEventNamesItsCandidate) {
  const auto e = candidate_event(1.0, "rolled_back", 12, "shard 3 failed");
  EXPECT_EQ(e.detail, "candidate 12: shard 3 failed");
  EXPECT_EQ(event_candidate(e), 12);
}

TEST(Events, OtherDetailsNameNoCandidate) {
  EXPECT_EQ(event_candidate({1.0, "campaign_started", "pid 12"}), std::nullopt);
  EXPECT_EQ(event_candidate({1.0, "verified", "candidate x: y"}), std::nullopt);
  EXPECT_EQ(event_candidate({1.0, "verified", "candidate 12abc: y"}), std::nullopt);
  EXPECT_EQ(event_candidate({1.0, "verified", "candidate -3: y"}), std::nullopt);
  EXPECT_EQ(event_candidate({1.0, "verified", "candidate 7"}), 7);
}

TEST(Events, DecisionsAreVerifiedAndRolledBackEventsOnly) {
  const std::vector<EventRecord> journal = {
      candidate_event(1, "verified", 1, "x=1"),          candidate_event(2, "rolled_back", 4, "shard 0 failed"),
      candidate_event(3, "confirmed", 5, "faster"),      candidate_event(4, "task_requeued", 6, "lost"),
      {5, "batch_proposed", "round 1: 4 candidates"},    candidate_event(6, "verified", 1, "again")};
  EXPECT_EQ(decided_candidates(journal), (std::set<std::int64_t>{1, 4}));
}
