// provenance_probe_test.cpp — which programs the scheduler asks for their version
// (scheduler/src/Provenance.h): only compilers, found in the command templates, each once; and
// which line of their --version output is kept.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

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

// A script the commands run names the compilers the campaign used (a build.sh calling nvcc);
// a compiler merely on PATH is nobody's: nvcc is not added unless something names it.
TEST(ProvenanceProbe, CompilersNamedInTheScriptsTheCommandsRun) {
  EXPECT_EQ(named_compilers({"sh build.sh {opt}", "./bench"},
                            {"#!/bin/sh\nCXX=g++-12\n$CXX -O\"$1\" a.cpp\nx=$(nvcc -c k.cu) && exec mpicxx x.o\n"}),
            (std::vector<std::string>{"g++-12", "nvcc", "mpicxx"}));
  EXPECT_TRUE(named_compilers({"./bench --n {n}"}).empty());  // no nvcc unless named
  const auto dir = std::filesystem::temp_directory_path() / ("flotilla-provenance-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "build.sh") << "c++ -O3 -o k k.cpp\n";
  std::ofstream(dir / "sub" / "Makefile") << "CC = clang-16\n";
  std::ofstream(dir / "prog") << std::string("\x7f" "ELF\0\0 g++", 9);  // a program, not a script
  EXPECT_EQ(read_scripts({"sh build.sh {opt}", "make -C sub -j4", "./prog", "sh -c 'g++ x.cpp'", "{build_dir}/k",
                          "bash " + (dir / "build.sh").string()},
                         dir),
            (std::vector<std::string>{"c++ -O3 -o k k.cpp\n", "CC = clang-16\n"}));
  std::filesystem::remove_all(dir);
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
