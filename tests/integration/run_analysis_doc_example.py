#!/usr/bin/python3
"""run_analysis_doc_example.py DOC.md FILE.h5 — runs the one ```python block of docs/analysis.md on a
campaign file written by flotilla (analysis.ini), so the documented example keeps working.
Needs flotilla_results importable (PYTHONPATH=results/python)."""
import re
import subprocess
import sys

doc, h5 = sys.argv[1:3]
blocks = re.findall(r"```python\n(.*?)```", open(doc, encoding="utf-8").read(), re.S)
if len(blocks) != 1:
    sys.exit(f"{doc}: expected one python block, found {len(blocks)}")
p = subprocess.run([sys.executable, "-c", blocks[0], h5], capture_output=True, text=True)
print(p.stdout, p.stderr, sep="", end="")
if p.returncode != 0:
    sys.exit(f"the example failed with exit code {p.returncode}")
expected = ["analysis: score (maximize), 16 candidates, 14 verified, 2 rolled back",
            "best: candidate 12 x=4 y=a z=1 score 41"]
missing = [line for line in expected if line not in p.stdout.splitlines()]
if missing:
    sys.exit("missing from the example's output:\n" + "\n".join(missing))
