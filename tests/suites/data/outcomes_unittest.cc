// outcomes_unittest.cc — linked into the GoogleTest samples binary so that a real gtest binary
// also produces every outcome flotilla records: a failure, a skip, a disabled test and a flaky
// test. FLOTILLA_SAMPLE_VARIANT=b stands for a second candidate: it breaks one passing test (a
// regression) and fixes the failing one (a fix). FLOTILLA_FLAKY_MARKER names a file: the flaky
// test fails while the file is missing (and creates it), and passes once it exists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace {

bool variant_b() {
  const char* variant = std::getenv("FLOTILLA_SAMPLE_VARIANT");
  return variant != nullptr && std::string(variant) == "b";
}

TEST(Outcomes, FailsUnlessVariantB) { EXPECT_TRUE(variant_b()) << "the baseline's known failure"; }

TEST(Outcomes, PassesUnlessVariantB) { EXPECT_FALSE(variant_b()) << "variant b breaks this"; }

TEST(Outcomes, Skipped) { GTEST_SKIP() << "not on this machine"; }

TEST(Outcomes, DISABLED_NeverRuns) { FAIL(); }

TEST(Outcomes, FlakyOnFirstRun) {
  const char* marker = std::getenv("FLOTILLA_FLAKY_MARKER");
  if (marker == nullptr) return;
  if (std::ifstream(marker).good()) return;
  std::ofstream(marker) << "seen\n";
  FAIL() << "first run fails";
}

}  // namespace
