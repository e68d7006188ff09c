#!/usr/bin/python3
"""bench/verdicts: how often a verdict is wrong, against today's median-of-3 rule, in one run.

usage: bench/verdicts/run.py BUILD_DIR [--campaigns N] [--ratio R] [--work MS] [--sigma S]
                             [--outliers P] [--slots K] [--keep DIR]

Runs many small campaigns of flotilla-synthetic (a CPU-bound kernel of known speed with
log-normal noise exp(S z) and 2x outliers of probability P, docs/verdicts.md): a baseline
(speed 1) and one candidate, on the local backend with K slots (2: the explore repeats of the two
run side by side on this machine's 2 cores and disturb each other). Half the campaigns have a
candidate of the baseline's speed (true ratio 1.00), half one truly R times faster (default
1.10), interleaved. For every campaign it reads the verdict from `flotilla results summary
--json` and, from the same file, what the old rule would have said: the candidate wins when the
median of its first 3 repeats beats the baseline's.

  false_winner_rate        ratio 1.00 reported "confirmed faster"       (target <= 0.05)
  detection_rate           ratio R reported "confirmed faster"          (target >= 0.90)
  naive_false_winner_rate  ratio 1.00 winning by median of 3
  naive_detection_rate     ratio R winning by median of 3
  mean_extra_repeats       runs per campaign beyond the 6 base repeats (adaptive repeats and
                           confirmation pairs, 2 runs a pair)

Each rate comes with its 95% Wilson interval. Ends with one JSON line.

The correctness half, checked on every campaign from its file with h5py (exit 1 naming the
campaign otherwise): it ran to its end (exit 0 or 3), each candidate has exactly its 3 base
repeats, and the report's count of adaptive repeats is the file's count of explore trials past
them. The rates are statistics and are never judged here. Full size: the defaults (200
campaigns, about 10 minutes); runs in bench/verdicts/RESULTS.md. The ctest bench_verdicts_runs
runs --campaigns 4 --work 2.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np


def wilson(k, n, z=1.96):
    if n == 0:
        return [0.0, 1.0]
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def campaign_ini(path, results, seed, ratio, args):
    with open(path, "w") as f:
        f.write(f"""[campaign]
name = verdict{seed}
results = {results}
seed = {seed}

[intent]
objective = rate
baseline = variant=base

[space]
param = variant: enum: base,cand

[explore]
command = flotilla-synthetic --variant {{variant}} --candidate-speed {ratio} --work {args.work} --sigma {args.sigma} --outliers {args.outliers}
repeats = 3
timeout = 60s

[search]
strategy = grid
budget = 1
batch = 1

[resources]
backend = local
slots = {args.slots}
""")


def first_three(results):
    """The first 3 repeats of each candidate (id 0: baseline, 1: candidate), and how many explore
    trials the file holds past them (the adaptive repeats)."""
    with h5py.File(results, "r") as f:
        trials = f["trials"][:]
    kinds = {v: k for k, v in h5py.check_enum_dtype(trials.dtype["kind"]).items()}
    values, extra = {0: [], 1: []}, 0
    for t in trials:
        if kinds[int(t["kind"])] == "explore" and int(t["attempt"]) == 0:
            if int(t["index"]) < 3:
                values[int(t["candidate"])].append(float(t["objective"]))
            else:
                extra += 1
    return values, extra


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--campaigns", type=int, default=200, help="campaigns in all, half of each ratio")
    parser.add_argument("--ratio", type=float, default=1.10)
    parser.add_argument("--work", type=float, default=10, help="milliseconds a run at speed 1")
    parser.add_argument("--sigma", type=float, default=0.05)
    parser.add_argument("--outliers", type=float, default=0.05)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--keep", help="keep the campaign files in this directory")
    args = parser.parse_args()
    flotilla = os.path.join(args.build, "bin", "flotilla")
    env = dict(os.environ, PATH=os.path.join(args.build, "bin") + ":" + os.environ.get("PATH", ""))
    work = args.keep or tempfile.mkdtemp(prefix="flotilla-verdicts-")
    os.makedirs(work, exist_ok=True)
    tally = {1.0: {"n": 0, "confirmed": 0, "naive": 0, "extra": 0, "words": {}},
             args.ratio: {"n": 0, "confirmed": 0, "naive": 0, "extra": 0, "words": {}}}
    started = time.time()
    for i in range(args.campaigns):
        ratio = 1.0 if i % 2 == 0 else args.ratio
        ini, results = os.path.join(work, f"v{i}.ini"), os.path.join(work, f"v{i}.h5")
        for stale in (results,):
            if os.path.exists(stale):
                os.remove(stale)
        campaign_ini(ini, results, i + 1, ratio, args)
        run = subprocess.run([flotilla, "run", ini, "--no-live"], env=env, capture_output=True, text=True)
        if run.returncode not in (0, 3):
            sys.exit(f"campaign {i}: exit {run.returncode}\n{run.stdout}\n{run.stderr}")
        summary = json.loads(subprocess.run([flotilla, "results", "summary", results, "--json"], env=env,
                                            capture_output=True, text=True, check=True).stdout)
        cand = next((c for c in summary["top"] if c["id"] == 1), None)
        words = (cand or {}).get("confirmation") or {}
        verdict = words.get("verdict", "none")
        three, extra = first_three(results)
        if len(three[0]) != 3 or len(three[1]) != 3 or extra != summary["cost"]["repeats_extra"]:
            sys.exit(f"bench/verdicts: campaign {i} ({results}): base repeats {len(three[0])} and {len(three[1])}, "
                     f"not 3 each, or {extra} explore trials past them where the report counts "
                     f"{summary['cost']['repeats_extra']} adaptive repeats")
        base3, cand3 = float(np.median(three[0])), float(np.median(three[1]))
        t = tally[ratio]
        t["n"] += 1
        t["confirmed"] += summary["verdict"] == "confirmed faster"
        t["naive"] += cand3 > base3
        t["extra"] += summary["cost"]["repeats_extra"] + summary["cost"]["confirm_runs"]
        t["words"][verdict] = t["words"].get(verdict, 0) + 1
        if (i + 1) % 20 == 0:
            print(f"  {i + 1}/{args.campaigns} campaigns, {time.time() - started:.0f} s", file=sys.stderr)
    null, alt = tally[1.0], tally[args.ratio]
    for name, t in (("ratio 1.00", null), (f"ratio {args.ratio:.2f}", alt)):
        print(f"{name}: {t['n']} campaigns; confirmed faster {t['confirmed']} {wilson(t['confirmed'], t['n'])}; "
              f"median-of-3 winner {t['naive']} {wilson(t['naive'], t['n'])}; verdicts {t['words']}; "
              f"extra runs {t['extra'] / max(1, t['n']):.1f} a campaign")
    if not args.keep:
        shutil.rmtree(work)
    n = null["n"] + alt["n"]
    print(json.dumps({
        "bench": "verdicts",
        "false_winner_rate": round(null["confirmed"] / null["n"], 4),
        "detection_rate": round(alt["confirmed"] / alt["n"], 4),
        "naive_false_winner_rate": round(null["naive"] / null["n"], 4),
        "naive_detection_rate": round(alt["naive"] / alt["n"], 4),
        "mean_extra_repeats": round((null["extra"] + alt["extra"]) / n, 2),
        "false_winner_interval": wilson(null["confirmed"], null["n"]),
        "detection_interval": wilson(alt["confirmed"], alt["n"]),
        "naive_false_winner_interval": wilson(null["naive"], null["n"]),
        "naive_detection_interval": wilson(alt["naive"], alt["n"]),
        "campaigns": n, "true_ratio": args.ratio, "sigma": args.sigma, "outliers": args.outliers,
        "work_ms": args.work, "slots": args.slots, "seconds": round(time.time() - started, 1),
    }))


if __name__ == "__main__":
    main()
