#!/usr/bin/env python3
"""Runs the h5py example of docs/results-schema.md on a file written by results_writer.

Usage: run_doc_example.py RESULTS_WRITER SCHEMA_MD
Exits non-zero if the example fails or prints something other than the known records.
"""
import os
import re
import subprocess
import sys
import tempfile

writer, doc = sys.argv[1], sys.argv[2]
blocks = re.findall(r"```python\n(.*?)```", open(doc, encoding="utf-8").read(), re.S)
if len(blocks) != 1:
    sys.exit(f"{doc}: expected one python block, found {len(blocks)}")

with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, "results.h5")
    # 6 trials, then end of stdin: the writer closes the file and exits.
    subprocess.run([writer, "create", path, "6"], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, check=True)
    script = os.path.join(scratch, "example.py")
    with open(script, "w", encoding="utf-8") as out:
        out.write(blocks[0])
    output = subprocess.run([sys.executable, script, path], capture_output=True, text=True,
                            check=True).stdout

print(output, end="")
expected = [
    "campaign stencil-tuning seed 18446744073709551557 objective gflops maximize",
    "trial 0: candidate 0 (tile=8) explore 0 attempt 0 ok objective 0 reason '' "
    "metrics {'gflops': 0.0, 'wall_s': 0.25}",
    "trial 5: candidate 2 (tile=32) evaluate 2 attempt 0 failed objective 7.5 reason 'reason 5' "
    "metrics {'gflops': 10.0, 'wall_s': 5.25}",
    "trials 6 events 6",
]
missing = [line for line in expected if line not in output.splitlines()]
if missing:
    sys.exit("missing from the example's output:\n" + "\n".join(missing))
