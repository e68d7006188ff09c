#!/usr/bin/python3
"""check_warm_start_campaign.py FLOTILLA CONFIG WORK — search.warm_start = OTHER.h5 end to end, on
the deterministic rollback campaign (score = x; x > 6 fails verification):

  1. a finished campaign A (grid, every configuration) is the warm start of campaign B (bayes):
     B says what it was given on stderr and records it as a `warm_start` event;
  2. B's first proposal is one of A's best verified configurations (the warm start's pick), where
     the same campaign without the warm start (same seed) proposes something else first;
  3. nothing of A is recorded in B: B's candidates are only those B proposed and ran;
  4. a warm start of another objective is refused naming the file.
"""
import os
import shutil
import subprocess
import sys

import h5py

flotilla, config, work = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(results, *options, expect=0):
    cmd = [flotilla, "run", config, f"--campaign.results={os.path.join(work, results)}", "--no-live", *options]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def candidates(results):
    with h5py.File(os.path.join(work, results), "r") as f:
        rows = [(int(c["round"]), text(c["config"]), text(c["origin"])) for c in f["candidates"][:]]
        events = [(text(e["kind"]), text(e["detail"])) for e in f["events"][:]]
    return rows, events


run("a.h5")  # grid over all 16 configurations: x = 6 is the best that verifies
warm = ["--search.strategy=bayes", "--campaign.seed=9", "--search.budget=4", "--search.batch=2"]
p = run("b.h5", *warm, f"--search.warm_start={os.path.join(work, 'a.h5')}")
if "warm start: 16 outcomes of" not in p.stderr or "(4 failed)" not in p.stderr:
    sys.exit(f"B does not say what it was given:\n{p.stderr}")
b, events = candidates("b.h5")
if not any(kind == "warm_start" and "16 outcomes" in detail for kind, detail in events):
    sys.exit(f"no warm_start event in B: {events}")
first = [config for round_, config, origin in b if round_ == 1][0]
if first not in ("x=6 y=a", "x=6 y=b"):
    sys.exit(f"B's first proposal is {first!r}, not one of A's best verified configurations")
if len(b) != 5:  # the baseline and the 4 B proposed
    sys.exit(f"B holds {len(b)} candidates: something of A was recorded as B's own")
run("c.h5", *warm)
c, _ = candidates("c.h5")
cold_first = [config for round_, config, origin in c if round_ == 1][0]
if cold_first == first:
    sys.exit(f"without the warm start the first proposal is the same ({first!r}): this check proves nothing")
print(f"ok: warm-started first proposal {first!r} (A's best), cold {cold_first!r}; nothing of A recorded in B")

p = run("d.h5", *warm, f"--search.warm_start={os.path.join(work, 'a.h5')}", "--intent.direction=minimize",
        expect=1)
if "a.h5: [search] warm_start: it optimises score (maximize), this campaign score (minimize)" not in p.stderr:
    sys.exit(f"another direction: {p.stderr}")
print("ok: a warm start of another direction is refused, naming the file")
