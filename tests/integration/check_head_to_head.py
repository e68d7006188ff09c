#!/usr/bin/python3
"""check_head_to_head.py FLOTILLA PYTHON_DIR WORKDIR — two finalists that cannot be told apart by their ratios
over the baseline meet head to head, and a tie is named (issue 34: the winner among ties).

The benchmark plays a DGEMM whose repeats mislead: each variant's first three runs (its explore
repeats) print fixed scores, a=2.0 and b=2.1, so b's median beats a's and both go to
confirmation; every later run (the confirmations' pairs) prints the variant's true speed, 2.0 for
both, give or take 1%. Both are confirmed about 2x faster than the baseline with overlapping
intervals; before, the larger point estimate won in silence. Now they meet head to head in
interleaved pairs, the verdict is no significant difference, and the report names the tie. The
Python reader agrees on the winner and sees the head-to-head row."""
import json
import os
import shutil
import subprocess
import sys

flotilla, python_dir, work = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "runs"))
bench = os.path.join(work, "misleading.sh")
with open(bench, "w") as f:
    f.write("""#!/bin/sh
# misleading.sh VARIANT RUNS_DIR: the first three runs of a variant print its explore score, the
# later ones its true score (base=1, a=b=2) with 1% noise.
echo x >> "$2/$1"; n=$(wc -l < "$2/$1")
awk -v v="$1" -v n="$n" -v seed="$$" 'BEGIN {
  srand(seed); true_score = (v == "base") ? 1 : 2
  if (n <= 3) score = (v == "base") ? 1 : (v == "a" ? 2.0 : 2.1)
  else score = true_score * (1 + 0.01 * (2 * rand() - 1))
  printf "flotilla-metric: score=%.6f\\n", score }'
""")
ini = os.path.join(work, "ties.ini")
with open(ini, "w") as f:
    f.write(f"""[campaign]
name = ties
seed = 3
results = {work}/ties.h5
workdir = {work}
[intent]
objective = score
baseline = v=base
[space]
param = v: enum: base, a, b
[explore]
command = sh {bench} {{v}} {work}/runs
repeats = 3
max_repeats = 3
warmup = 0
[search]
strategy = grid
budget = 2
batch = 1
[confirm]
max_pairs = 40
[resources]
slots = 1
""")


def fail(what, p=None):
    sys.exit(f"FAIL: {what}" + (f"\nexit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}" if p else ""))


p = subprocess.run([flotilla, "run", ini, "--no-live"], capture_output=True, text=True, timeout=240)
if p.returncode != 0:
    fail("the campaign ends", p)
s = json.loads(subprocess.run([flotilla, "results", "summary", f"{work}/ties.h5", "--json"], check=True,
                              capture_output=True, text=True).stdout)
confirmed = [c for c in s["top"] if (c.get("confirmation") or {}).get("verdict") == "faster"]
if sorted(c["config"] for c in confirmed) != ["v=a", "v=b"]:
    fail(f"the setup: both a and b confirmed faster than the baseline: {s['top']}", p)
print("ok: a and b are both confirmed faster than the baseline")
best = s["best"]["config"]
if best not in ("v=a", "v=b"):
    fail(f"the winner is a or b: {best}", p)
duels = s.get("head_to_head") or []
if len(duels) != 1 or not duels[0]["tie"] or duels[0]["verdict"] != "no_difference":
    fail(f"one head-to-head confirmation, a tie: {duels}", p)
ids = {c["config"]: c["id"] for c in s["top"]}
if "tie        candidate {} and candidate {} cannot be told apart".format(
        ids[best], ids["v=b" if best == "v=a" else "v=a"]) not in p.stdout:
    fail("the final report names the tie", p)
print(f"ok: they met head to head ({duels[0]['ratio']:.3f}x in {duels[0]['pairs']} pairs), the tie is named")

sys.path.insert(0, python_dir)
import flotilla_results  # noqa: E402

campaign = flotilla_results.Campaign(f"{work}/ties.h5")
if campaign.best["config"] != best:
    fail(f"the Python reader's winner is {campaign.best['config']}, flotilla's {best}")
rows = campaign.confirmations
if len(rows[rows["reference"] != 0]) != 1:
    fail(f"the Python reader sees one head-to-head row: {rows}")
print("ok: the Python reader agrees on the winner and sees the head-to-head row")
# The pandas example's sum (docs/analysis.md): a confirmation's pairs share its time, so the time
# per kind adds up to no more than the campaign's span (before: 326 s of pairs in a 90 s campaign).
trials = campaign.trials
span = trials["end"].max() - trials["start"].min()
spent = trials.groupby("kind")["duration"].sum()
if spent.get("confirm", 0) > span + 1e-6:
    fail(f"confirmation pairs sum to {spent.get('confirm'):.2f} s in a {span:.2f} s campaign")
print(f"ok: confirmation pairs sum to {spent.get('confirm', 0):.2f} s of a {span:.2f} s campaign")
