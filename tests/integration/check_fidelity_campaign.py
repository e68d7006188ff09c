#!/usr/bin/python3
"""check_fidelity_campaign.py FLOTILLA CONFIG WORK [--option=value ...] — search.fidelity end to end
(configs/fidelity.ini: the stencil's grid size n is the fidelity, 1024 the full one), checked
against the file read with h5py:

  1. candidates start at the smallest size and are promoted size by size (hyperband): some are
     explored at every size, and more at small sizes than at the full one;
  2. nothing below the full size is ever verified or confirmed (no evaluate or confirm trial),
     and the summary calls those candidates screened;
  3. the winner is at the full size and verified;
  4. the best candidate of the largest size below full was measured at full size too, so the
     campaign did not end on a configuration only seen small.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "python"))
import flotilla_results  # noqa: E402  the pandas reader must reach the same verdict

flotilla, config, work, *extra = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
results = os.path.join(work, "fidelity.h5")
FULL = "1024"
EXPLORE, EVALUATE, CONFIRM = 0, 1, 2  # TrialKind values (docs/results-schema.md)

p = subprocess.run([flotilla, "run", config, f"--campaign.results={results}", "--no-live", *extra],
                   capture_output=True, text=True, timeout=900)
if p.returncode != 0:
    sys.exit(f"flotilla run: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
summary = json.loads(subprocess.run([flotilla, "results", "summary", results, "--json"], check=True,
                                    capture_output=True, text=True).stdout)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


with h5py.File(results, "r") as f:
    candidates = {int(c["id"]): (text(c["config"]), text(c["origin"])) for c in f["candidates"][:]}
    trials = f["trials"][:]
    if text(f["campaign"].attrs["fidelity"]) != "n=" + FULL:
        sys.exit(f"/campaign fidelity attribute: {f['campaign'].attrs['fidelity']!r}")


def size(config):
    return dict(kv.split("=") for kv in config.split())["n"]


sizes = {c: size(cfg) for c, (cfg, _) in candidates.items()}
per_size = {}
for c, n in sizes.items():
    per_size[n] = per_size.get(n, 0) + 1
if set(per_size) != {"128", "256", "512", FULL} or per_size["128"] <= per_size[FULL] - 1:
    sys.exit(f"candidates per size {per_size}: expected every size, most at the smallest")

for t in trials:
    c, kind = int(t["candidate"]), int(t["kind"])
    if kind in (EVALUATE, CONFIRM) and sizes[c] != FULL:
        sys.exit(f"candidate {c} ({candidates[c][0]}) at n={sizes[c]} has a {('evaluate', 'confirm')[kind - 1]} trial")
screened = summary["progress"]["screened"]
if screened != sum(1 for n in sizes.values() if n != FULL) - sum(
        1 for c in candidates if sizes[c] != FULL and not any(int(t["candidate"]) == c and int(t["kind"]) == EXPLORE
                                                              and int(t["status"]) == 0 for t in trials)):
    sys.exit(f"summary says {screened} screened")

best = summary["best"]
if not best or size(best["config"]) != FULL or best["status"] != "verified":
    sys.exit(f"the winner is not a verified full-size candidate: {best}")

reader = flotilla_results.read_campaign(results)
if reader.counts() != summary["progress"] or reader.best["config"] != best["config"]:
    sys.exit(f"the pandas reader disagrees: counts {reader.counts()}, best {reader.best['config']}")

# The best (median gflops) candidate explored at 512 has a twin at full size.
gflops = {}
for t in trials:
    if int(t["kind"]) == EXPLORE and int(t["status"]) == 0:
        gflops.setdefault(int(t["candidate"]), []).append(float(t["objective"]))
at_512 = [c for c, n in sizes.items() if n == "512" and c in gflops]
top = max(at_512, key=lambda c: statistics.median(gflops[c]))
twin = candidates[top][0].replace("n=512", "n=" + FULL)
if twin not in {cfg for cfg, _ in candidates.values()}:
    sys.exit(f"the best candidate at n=512 ({candidates[top][0]}) was never measured at full size")
print(f"ok: candidates per size {per_size}; {screened} screened, never verified; winner {best['config']} "
      f"verified; the best at n=512 measured at full size ({twin})")

# A budget too small for hyperband to reach the full size: the campaign itself must measure the best
# candidate of the largest size reached at full size before it ends (origin "fidelity").
small = os.path.join(work, "small.h5")
p = subprocess.run([flotilla, "run", config, f"--campaign.results={small}", "--no-live", "--search.budget=10", *extra],
                   capture_output=True, text=True, timeout=900)
if p.returncode not in (0, 3):
    sys.exit(f"flotilla run --search.budget=10: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
with h5py.File(small, "r") as f:
    rows = [(int(c["id"]), text(c["config"]), text(c["origin"])) for c in f["candidates"][:]]
    trials = f["trials"][:]
medians = {}
for t in trials:
    if int(t["kind"]) == EXPLORE and int(t["status"]) == 0:
        medians.setdefault(int(t["candidate"]), []).append(float(t["objective"]))
screened_rows = [(i, cfg) for i, cfg, origin in rows if size(cfg) != FULL and i in medians]
top_size = max(int(size(cfg)) for _, cfg in screened_rows)
if top_size >= int(FULL):
    sys.exit("hyperband reached the full size in 10 candidates: this check would prove nothing")
best_id, best_cfg = max(((i, cfg) for i, cfg in screened_rows if int(size(cfg)) == top_size),
                        key=lambda r: statistics.median(medians[r[0]]))
added = [(i, cfg) for i, cfg, origin in rows if origin == "fidelity"]
want = best_cfg.replace(f"n={top_size}", "n=" + FULL)
if added != [(len(rows) - 1, want)] or "measuring the best screened candidate at full fidelity" not in p.stderr:
    sys.exit(f"with budget 10 (largest size reached {top_size}): added {added}, expected [{want}] last")
print(f"ok: with budget 10 hyperband reached n={top_size} only; the campaign added {want} at full size")
