// WireTest.cpp — the worker's messages survive the trip, and short messages are refused.
#include <gtest/gtest.h>

#include <cmath>

#include "Wire.h"

namespace flotilla::jobs::wire {
namespace {

results::JobRecord record(std::uint64_t id) {
  results::JobRecord r;
  r.id = id;
  r.attempt = 2;
  r.status = results::TrialStatus::timeout;
  r.start = 1.5;
  r.end = 2.25;
  r.exit_code = 137;
  r.objective = std::nan("");
  r.reason = "timed out after 2s";
  r.output_tail = std::string("bytes \0 and \xff", 13);
  r.metrics = {{"gflops", 12.5}, {"time_s", 1e-7}};
  return r;
}

TEST(Wire, ResultsRoundTrip) {
  Results sent{0.125, {record(1), record(1ull << 40)}};
  sent.records[1].metrics.clear();
  sent.records[1].objective = 3;
  const Results got = decode_results(encode(sent));
  EXPECT_EQ(got.busy_seconds, 0.125);
  ASSERT_EQ(got.records.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto &a = sent.records[i], &b = got.records[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.attempt, b.attempt);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.start, b.start);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(a.exit_code, b.exit_code);
    EXPECT_EQ(std::isnan(a.objective), std::isnan(b.objective));
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_EQ(a.output_tail, b.output_tail);
    ASSERT_EQ(a.metrics.size(), b.metrics.size());
    for (std::size_t m = 0; m < a.metrics.size(); ++m) {
      EXPECT_EQ(a.metrics[m].name, b.metrics[m].name);
      EXPECT_EQ(a.metrics[m].value, b.metrics[m].value);
    }
  }
  EXPECT_EQ(got.records[1].objective, 3);
}

TEST(Wire, HelloAndBatchRoundTrip) {
  const Hello hello = decode_hello(encode(Hello{"node17", "GPU-8f3c", "4-7"}));
  EXPECT_EQ(hello.cores, "4-7");
  EXPECT_EQ(hello.host, "node17");
  EXPECT_EQ(hello.device, "GPU-8f3c");
  const Batch batch = decode_batch(encode(Batch{10, 1034}));
  EXPECT_EQ(batch.begin, 10u);
  EXPECT_EQ(batch.end, 1034u);
  EXPECT_EQ(encode(Batch{0, 1}).size(), 16u);  // a batch costs the same whatever its tasks are
}

TEST(Wire, ShortOrLongMessagesAreRefused) {
  const std::string bytes = encode(Results{1.0, {record(1)}});
  try {
    (void)decode_results(std::string_view(bytes).substr(0, bytes.size() - 3));
    FAIL() << "no error";
  } catch (const WireError& e) {
    EXPECT_EQ(std::string(e.what()), "message too short: wanted 8 more bytes, 5 left");
  }
  EXPECT_THROW((void)decode_batch(encode(Batch{1, 2}) + "x"), WireError);
  EXPECT_THROW((void)decode_batch(encode(Batch{5, 2})), WireError);
  EXPECT_THROW((void)decode_hello(""), WireError);
}

}  // namespace
}  // namespace flotilla::jobs::wire
