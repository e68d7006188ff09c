#!/usr/bin/python3
"""check_examples.py CMAKE BUILD_DIR WORK — every installed example campaign runs from the prefix.

`cmake --install` into WORK/prefix, then each share/doc/flotilla/examples/*.ini is run by the
installed flotilla from a folder outside both the prefix and the source tree, with nothing of the
build tree on PATH, and small budgets from the command line. Each must end with exit code 0, its
baseline verified, and no trial failed for a file or program that is not there (the examples'
paths are relative to their own folder, campaign.workdir = .; their helper programs are installed
beside flotilla). An example added to configs/ is run too: it needs an entry in SMALL only to
be made shorter.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

cmake, build, work = sys.argv[1:4]
prefix = os.path.join(work, "prefix")
env = dict(os.environ, PATH="/usr/bin:/bin", PYTHONPATH="")

# Overrides that keep each example short (the whole test under about two minutes on 2 cores).
SMALL = {
    "quickstart": ["--search.budget=2", "--search.batch=2", "--explore.repeats=2", "--confirm.max_pairs=8"],
    "fidelity": ["--search.budget=3", "--explore.repeats=2", "--confirm.max_pairs=8"],
    "pareto": ["--search.budget=4"],
    "build": ["--search.budget=8", "--explore.repeats=2", "--confirm.max_pairs=8"],
    "propose": ["--propose.budget=2", "--explore.repeats=2", "--confirm.max_pairs=8"],
    "decode_propose": ["--propose.budget=1", "--confirm.max_pairs=8"],
}
MISSING = re.compile(r"No such file|matches no file|does not exist|not found|cannot open", re.I)


def fail(message):
    sys.exit("FAILED: " + message)


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
p = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True)
if p.returncode != 0:
    fail(f"cmake --install exited {p.returncode}\n{p.stdout}\n{p.stderr}")
flotilla = os.path.join(prefix, "bin", "flotilla")
examples = sorted(glob.glob(os.path.join(prefix, "share", "doc", "flotilla", "examples", "*.ini")))
if len(examples) < 10:
    fail(f"only {len(examples)} examples installed: {examples}")

campaigns = os.path.join(work, "campaigns")  # where flotilla is started: neither prefix nor source
os.makedirs(campaigns)
for ini in examples:
    name = os.path.splitext(os.path.basename(ini))[0]
    h5 = os.path.join(campaigns, name + ".h5")
    began = time.monotonic()
    p = subprocess.run([flotilla, "run", ini, f"--campaign.results={h5}", "--no-live", *SMALL.get(name, [])],
                       cwd=campaigns, env=env, capture_output=True, text=True, timeout=300)
    took = time.monotonic() - began
    if p.returncode != 0:
        fail(f"examples/{name}.ini exited {p.returncode} after {took:.1f} s\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    # A staged example writes one file per stage; its last stage holds the campaign's winner.
    files = [h5] if os.path.exists(h5) else sorted(glob.glob(os.path.join(campaigns, name + ".stage*.h5")))
    if not files:
        fail(f"examples/{name}.ini wrote no results file")
    for path in files:
        s = subprocess.run([flotilla, "results", "summary", path, "--json"], env=env, capture_output=True, text=True)
        summary = json.loads(s.stdout)
        reasons = [r for r in summary["failures_by_reason"] if MISSING.search(r)]
        if reasons:
            fail(f"examples/{name}.ini: trials failed for something missing: {reasons[:3]}")
    if summary["progress"]["verified"] < 1:
        fail(f"examples/{name}.ini: nothing verified: {summary['progress']}")
    print(f"ok: examples/{name}.ini ran from the prefix in {took:.1f} s ({summary['progress']['verified']} verified)")
