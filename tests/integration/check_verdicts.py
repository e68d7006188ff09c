#!/usr/bin/python3
"""Confirmation end to end on a benchmark of known speed (docs/verdicts.md).

usage: check_verdicts.py FLOTILLA WORK

flotilla-synthetic --simulate prints a rate of exactly speed / noise, the noise log-normal
(sigma 0.03) with 2% of runs halved: a known true ratio, without the machine's own noise. Each
campaign has a baseline (speed 1) and one candidate, on the local backend:
  - a candidate with the baseline's speed is never reported as confirmed faster (5 campaigns,
    the baseline stays the winner), whatever its median of 3 says;
  - a candidate truly 1.5x faster is confirmed faster (3 campaigns), with an interval that
    excludes 1 by the minimum effect and holds 1.5; the pairs are recorded as confirm trials,
    and /confirmations holds the same verdict;
  - with confirm.enabled = false the old median rule decides, and says it is not confirmed.
Each check can fail: a rule that trusted medians, or looked at every pair, would report some
null candidate as the winner, and one that never confirmed would miss the 1.5x one.
"""
import json
import os
import subprocess
import sys

import h5py

FLOTILLA, WORK = sys.argv[1:3]
BIN = os.path.dirname(FLOTILLA)
ENV = dict(os.environ, PATH=BIN + ":" + os.environ.get("PATH", ""))
os.makedirs(WORK, exist_ok=True)


def campaign(name, speed, seed, *extra):
    ini = os.path.join(WORK, f"{name}.ini")
    results = os.path.join(WORK, f"{name}.h5")
    for stale in (results,):
        if os.path.exists(stale):
            os.remove(stale)
    with open(ini, "w") as f:
        f.write(f"""[campaign]
name = {name}
results = {results}
seed = {seed}
[intent]
objective = rate
baseline = variant=base
[space]
param = variant: enum: base,cand
[explore]
command = flotilla-synthetic --simulate --variant {{variant}} --candidate-speed {speed} --sigma 0.03 --outliers 0.02
repeats = 3
[search]
strategy = grid
budget = 1
[resources]
slots = 2
""")
    p = subprocess.run([FLOTILLA, "run", ini, "--no-live", *extra], env=ENV, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        sys.exit(f"{name}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    summary = json.loads(subprocess.run([FLOTILLA, "results", "summary", results, "--json"], env=ENV,
                                        capture_output=True, text=True, check=True).stdout)
    return results, summary, p.stdout


def check(ok, what):
    if not ok:
        sys.exit(f"FAILED: {what}")


for seed in range(1, 6):
    results, s, out = campaign(f"null{seed}", 1.0, seed)
    check(s["verdict"] != "confirmed faster" and s["best"]["origin"] == "baseline",
          f"null{seed}: a candidate of the baseline's speed won: {s['verdict']}\n{out}")
    cand = next(c for c in s["top"] if c["id"] == 1)
    if cand["confirmation"]:
        check(cand["confirmation"]["verdict"] in ("no_difference", "slower"), f"null{seed}: {cand['confirmation']}")

for seed in range(1, 4):
    results, s, out = campaign(f"fast{seed}", 1.5, seed)
    check(s["verdict"] == "confirmed faster" and s["best"]["config"] == "variant=cand", f"fast{seed}: {out}")
    low, high = s["gain_interval"]["low"], s["gain_interval"]["high"]
    check(1.02 < low <= 1.5 <= high, f"fast{seed}: interval [{low}, {high}] should exclude 1.02 and hold 1.5")
    check(f"confirmed faster: " in out and "over the baseline in" in out, f"fast{seed}: report: {out}")
    with h5py.File(results, "r") as f:
        trials = f["trials"][:]
        kinds = {v: k for k, v in h5py.check_enum_dtype(trials.dtype["kind"]).items()}
        pairs = [t for t in trials if kinds[int(t["kind"])] == "confirm"]
        rows = f["confirmations"][:]
        verdicts = {v: k for k, v in h5py.check_enum_dtype(rows.dtype["verdict"]).items()}
    check(len(pairs) == s["best"]["confirmation"]["pairs"], f"fast{seed}: {len(pairs)} confirm trials")
    check(len(rows) == 1 and verdicts[int(rows[0]["verdict"])] == "faster" and int(rows[0]["candidate"]) == 1,
          f"fast{seed}: /confirmations {rows}")

# Warm-up runs are recorded (kind warmup) and never counted: one per candidate, and one of each
# side before the confirmation's pairs (run inside its task, not recorded as pairs). Adaptive
# repeats are off: on a loaded machine the candidate's spread can earn it 3 more runs, which is
# not what this checks.
results, s, out = campaign("warmup", 1.5, 1, "--explore.warmup=1", "--explore.exclusive=true", "--explore.max_repeats=3")
check(s["cost"]["warmups"] == 2 and s["verdict"] == "confirmed faster", f"warm-up: {s['cost']}")
with h5py.File(results, "r") as f:
    trials = f["trials"][:]
    kinds = {v: k for k, v in h5py.check_enum_dtype(trials.dtype["kind"]).items()}
    warm = [t for t in trials if kinds[int(t["kind"])] == "warmup"]
check(sorted(int(t["candidate"]) for t in warm) == [0, 1], f"warm-up trials: {warm}")
check(all(c["repeats"] == 3 for c in s["top"]), f"warm-ups are not repeats: {s['top']}")

results, s, out = campaign("median_rule", 1.5, 1, "--confirm.enabled=false")
check(s["verdict"] == "median" and not s["best_confirmed"] and s["best"]["confirmation"] is None,
      f"confirmation off: {s['verdict']}")
check("not confirmed: confirmation is off" in out, f"confirmation off: {out}")
print("ok")
