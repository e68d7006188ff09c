#!/usr/bin/env python3
"""A stand-in for a coding agent (no model runs on these machines): it reads the prompt
flotilla-propose-agent rendered, checks that it says what an agent needs (the goal, the code it
starts from), and edits matmul.cpp in its working folder the way an agent would after reading
it: the loop interchange. It prints what it did, as an agent's last words."""
import os
import sys

prompt = open(sys.argv[1]).read()
for needed in ("Goal: maximize `gflops`", "## The code you start from", "## What to do"):
    if needed not in prompt:
        sys.exit(f"stand-in agent: the prompt lacks '{needed}'")
source = open("matmul.cpp").read()
old = """  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += a.at(i * n + k) * b.at(k * n + j);
      c[i * n + j] = sum;
    }"""
new = """  for (int i = 0; i < n * n; ++i) c[i] = 0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const double aik = a[i * n + k];
      for (int j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
    }"""
if old not in source:
    print("stand-in agent: nothing I know how to improve")
    sys.exit(0)
open("matmul.cpp", "w").write(source.replace(old, new))
print("Interchanged the j and k loops so B and C are read along their rows, and dropped the checked indexing.")
