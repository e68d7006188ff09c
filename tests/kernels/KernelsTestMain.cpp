// KernelsTestMain.cpp — gtest main for kernels_test: Kokkos lives once for the whole binary,
// because Kokkos may be initialised and finalised only once per process.
#include <gtest/gtest.h>

#include <memory>

#include "flotilla/kernels/Runtime.h"

namespace {

class KokkosEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { m_runtime = std::make_unique<flotilla::kernels::Runtime>(); }
  void TearDown() override { m_runtime.reset(); }

 private:
  std::unique_ptr<flotilla::kernels::Runtime> m_runtime;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new KokkosEnvironment);  // gtest owns it
  return RUN_ALL_TESTS();
}
