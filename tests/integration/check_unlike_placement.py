#!/usr/bin/python3
"""check_unlike_placement.py FLOTILLA WORKDIR — medians measured under unlike load are not held
against each other (issue 34: fair measurements).

On the mpi backend with 6 ranks (5 workers), round 0 runs the baseline's 3 repeats 3 at a time and
round 1 runs 5 candidates' 15 repeats 5 at a time (three full waves). The benchmark's score is its speed divided by
the benchmark runs in progress beside it (counted through files, so the machine's own load does
not matter): the candidates' medians (speed/5) all fall below the baseline's (10/3), though each is
truly 1.1x to 1.5x faster. Before, none reached confirmation and the baseline "won" in silence.
Now the summary names the unlike placement, the best candidates are confirmed against the
baseline in interleaved pairs (one at a time: each alone), and speed=15 wins at 1.5x."""
import json
import os
import shutil
import subprocess
import sys

flotilla, work = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
bench = os.path.join(work, "contended.sh")
with open(bench, "w") as f:
    f.write("""#!/bin/sh
# contended.sh SPEED DIR: SPEED divided by the runs of this benchmark in progress (itself included)
mkdir -p "$2"; me="$2/$$"; : > "$me"; sleep 0.5; n=$(ls "$2" | wc -l); sleep 0.2; rm -f "$me"
awk -v s="$1" -v n="$n" 'BEGIN { printf "flotilla-metric: rate=%.6f\\n", s / n }'
""")
ini = os.path.join(work, "unlike.ini")
with open(ini, "w") as f:
    f.write(f"""[campaign]
name = unlike
seed = 1
results = {work}/unlike.h5
workdir = {work}
[intent]
objective = rate
baseline = speed=10
[space]
param = speed: int: 10..15
[explore]
command = sh {bench} {{speed}} {work}/running
repeats = 3
max_repeats = 3
[search]
strategy = grid
budget = 5
batch = 5
[confirm]
max_pairs = 8
[resources]
backend = mpi
ranks = 6
""")


def fail(what, p=None):
    sys.exit(f"FAIL: {what}" + (f"\nexit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}" if p else ""))


p = subprocess.run([flotilla, "run", ini, "--no-live"], capture_output=True, text=True, timeout=240)
if p.returncode != 0:
    fail("the campaign ends with a winner", p)
s = json.loads(subprocess.run([flotilla, "results", "summary", f"{work}/unlike.h5", "--json"], check=True,
                              capture_output=True, text=True).stdout)
by_id = {c["id"]: c for c in s["top"]}
base = next(c for c in s["top"] if c["origin"] == "baseline")
others = [c for c in s["top"] if c["origin"] != "baseline"]
if not all(c["objective"] < base["objective"] for c in others):
    fail(f"the setup: every candidate's median below the baseline's ({base['objective']}): {others}")
print("ok: under unlike load every candidate's median is below the baseline's")
if "unlike placement: the baseline's repeats ran 3 at a time, the candidates' up to 5" not in p.stdout:
    fail("the report names the unlike placement", p)
print("ok: the report names the unlike placement and the settings that measure each alone")
best = s.get("best") or {}
if best.get("config") != "speed=15" or (best.get("confirmation") or {}).get("verdict") != "faster":
    fail(f"speed=15 confirmed faster in interleaved pairs: {best}", p)
ratio = best["confirmation"]["ratio"]
if not 1.4 < ratio < 1.6:
    fail(f"its ratio is about 1.5: {ratio}", p)
print(f"ok: the winner is speed=15, confirmed {ratio:.3g}x faster in pairs")
if (os.cpu_count() or 1) < 5 and "warning: up to 5 benchmark runs at once on a host with" not in p.stderr:
    fail("more benchmark runs at once than cores is warned about at the start", p)
print("ok: the oversubscription is warned about, naming resources.ranks")
