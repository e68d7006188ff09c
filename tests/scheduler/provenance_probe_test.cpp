// provenance_probe_test.cpp — which programs the scheduler asks for their version
// (scheduler/src/Provenance.h): only compilers, found in the command templates, each once; and
// which line of their --version output is kept.
#include <gtest/gtest.h>

#include "Provenance.h"

namespace flotilla::scheduler {
namespace {

TEST(ProvenanceProbe, OnlyCompilersAreRun) {
  for (const char* name : {"g++", "gcc-12", "clang++-16", "/usr/bin/g++-12", "nvcc", "/usr/local/cuda/bin/nvcc",
                           "mpicxx", "icpx", "hipcc", "gfortran", "cc", "c++"})
    EXPECT_TRUE(is_compiler(name)) << name;
  // Anything else may do something when run with --version; flotilla never runs it.
  for (const char* name : {"make", "cmake", "sh", "./build.sh", "rm", "g++x", "xg++", "gcc-", "nvcc.sh", ""})
    EXPECT_FALSE(is_compiler(name)) << name;
}

TEST(ProvenanceProbe, CompilersNamedInCommandsOnceEach) {
  EXPECT_EQ(named_compilers({"g++ -O{opt} -o {build_dir}/k k.cpp", "sh -c 'nvcc -c a.cu && g++ a.o'",
                             "./bench --n {n}", "", "/usr/bin/clang++-16 x.cpp"}),
            (std::vector<std::string>{"g++", "nvcc", "/usr/bin/clang++-16"}));
  // A command that does not split (an open quote) is the settings check's to report.
  EXPECT_TRUE(named_compilers({"g++ 'unterminated"}).empty());
  EXPECT_TRUE(named_compilers({"make -j4", "./run"}).empty());
}

TEST(ProvenanceProbe, VersionLine) {
  EXPECT_EQ(version_line("g++", "g++ (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022\n"), "g++ (Debian 12.2.0-14) 12.2.0");
  EXPECT_EQ(version_line("clang++", "\n  Debian clang version 16.0.6  \nTarget: x86_64\n"), "Debian clang version 16.0.6");
  EXPECT_EQ(version_line("/usr/local/cuda/bin/nvcc",
                         "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
                         "Built on Wed_Aug_20\nCuda compilation tools, release 13.0, V13.0.88\n"),
            "Cuda compilation tools, release 13.0, V13.0.88");
  EXPECT_EQ(version_line("g++", ""), "");
  EXPECT_EQ(version_line("g++", " \n\n"), "");
}

}  // namespace
}  // namespace flotilla::scheduler
