#!/usr/bin/python3
"""check_pareto_campaign.py FLOTILLA CONFIG WORK [--option=value ...] — a campaign of two objectives
(configs/pareto.ini) end to end, checked against the file read with h5py, not flotilla's reader:

  1. the run ends with a pick (exit 0); its summary's front is exactly the non-dominated set of
     the candidates' medians of time_s and residual recomputed here from /trials and /metrics,
     leaving out rolled-back candidates and failed explorations;
  2. every front member is verified (the float candidates, which dominate their double twins
     and fail verification, are rolled back, and the double ones they hid are verified in turn),
     and the pick is the knee computed here from the verified members;
  3. a resumed run with a larger budget proposes more candidates and keeps (1) and (2);
  4. an objective the benchmark does not print fails every exploration with a reason naming it.
Extra options go to every `flotilla run` (e.g. --resources.backend=slurm).
"""
import json
import math
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
results = os.path.join(work, "pareto.h5")
OBJECTIVES = [("time_s", False), ("residual", False)]
EXPLORE, EVALUATE = 0, 1  # TrialKind values (docs/results-schema.md)


def run(*options, expect=0):
    cmd = [flotilla, "run", config, f"--campaign.results={results}", "--no-live", *extra, *options]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode != expect:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def summary():
    out = subprocess.run([flotilla, "results", "summary", results, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def recorded():
    """Each candidate's median of each objective over its explore repeats (latest attempts), and
    whether it is rolled back, read with h5py."""
    with h5py.File(results, "r") as f:
        candidates = f["candidates"][:]
        trials = f["trials"][:]
        metric_rows = f["metrics"][:]
    metrics = {}
    for m in metric_rows:
        metrics.setdefault(int(m["trial"]), {})[text(m["name"])] = float(m["value"])
    latest = {}
    for row, t in enumerate(trials):
        key = (int(t["candidate"]), int(t["kind"]), int(t["index"]))
        if key not in latest or int(t["attempt"]) >= int(trials[latest[key]]["attempt"]):
            latest[key] = row
    values, failed_explore, evaluations = {}, set(), {}
    for (cand, kind, index), row in latest.items():
        t = trials[row]
        if kind == EXPLORE:
            if int(t["status"]) != 0:
                failed_explore.add(cand)
            else:
                for name, _ in OBJECTIVES:
                    values.setdefault(cand, {}).setdefault(name, []).append(metrics.get(row, {}).get(name, math.nan))
        elif kind == EVALUATE:
            evaluations.setdefault(cand, []).append(int(t["status"]))
    medians = {c: [statistics.median(v[name]) for name, _ in OBJECTIVES] for c, v in values.items()
               if c not in failed_explore}
    rolled_back = {c for c, statuses in evaluations.items() if any(s != 0 for s in statuses)}
    configs = {int(c["id"]): text(c["config"]) for c in candidates}
    return medians, rolled_back, configs


def dominates(a, b):
    better = False
    for (x, y), (_, maximize) in zip(zip(a, b), OBJECTIVES):
        if (x < y if maximize else x > y):
            return False
        if (x > y if maximize else x < y):
            better = True
    return better


def front_of(points):
    return {c for c, v in points.items() if not any(dominates(w, v) for d, w in points.items() if d != c)}


def knee(points):
    """The member nearest every objective's best once each is scaled to [0, 1] over the front;
    ties to the fastest (the summary's order: best first by the first objective)."""
    ids = sorted(points, key=lambda c: points[c][0])
    lows = [min(points[c][g] for c in ids) for g in range(len(OBJECTIVES))]
    highs = [max(points[c][g] for c in ids) for g in range(len(OBJECTIVES))]

    def score(c):
        total = 0.0
        for g, (_, maximize) in enumerate(OBJECTIVES):
            span = highs[g] - lows[g]
            s = 0.0 if span <= 0 else ((highs[g] - points[c][g]) if maximize else (points[c][g] - lows[g])) / span
            total += s * s
        return total
    return min(ids, key=score)


def check(label):
    s = summary()
    medians, rolled_back, configs = recorded()
    eligible = {c: v for c, v in medians.items() if c not in rolled_back}
    expected_front = front_of(eligible)
    got_front = {m["id"] for m in s["front"]}
    if got_front != expected_front:
        sys.exit(f"{label}: summary front {sorted(got_front)} != recomputed {sorted(expected_front)}")
    unverified = [m["id"] for m in s["front"] if m["status"] != "verified"]
    if unverified:
        sys.exit(f"{label}: front members not verified: {unverified}")
    if s["verdict"] != "picked from the front" or s["pick"]["rule"] != "knee":
        sys.exit(f"{label}: verdict {s['verdict']!r}, rule {s['pick']['rule']!r}")
    want = knee({c: eligible[c] for c in expected_front})
    if s["pick"]["candidate"] != want or not s["best_verified"]:
        sys.exit(f"{label}: pick {s['pick']['candidate']}, the knee recomputed here is {want}")
    for m in s["front"]:
        for g, (name, _) in enumerate(OBJECTIVES):
            if not math.isclose(m["values"][name], medians[m["id"]][g], rel_tol=1e-12, abs_tol=1e-300):
                sys.exit(f"{label}: candidate {m['id']} {name} {m['values'][name]} != median {medians[m['id']][g]}")
    reader = flotilla_results.read_campaign(results)
    if reader.counts() != s["progress"] or int(reader.best["id"]) != want or set(reader.front["id"]) != got_front:
        sys.exit(f"{label}: the pandas reader disagrees: counts {reader.counts()}, best {reader.best['id']}, "
                 f"front {sorted(reader.front['id'])}")
    floats_rolled = [c for c in rolled_back if "precision=float" in configs[c]]
    print(f"ok: {label}: {len(medians)} explored, front {sorted(expected_front)} all verified, "
          f"pick {want} ({configs[want]}), {len(floats_rolled)} float candidates rolled back")
    return s, len(configs), floats_rolled


p = run()
if "pick " not in p.stdout or "Pareto front of time_s:min, residual:min" not in p.stdout:
    sys.exit(f"the run's report has no pick or front:\n{p.stdout}")
s, candidates, floats = check("first run")
if not floats:
    sys.exit("no float candidate was rolled back: the waves that verify the members they hid were not exercised")

run("--search.budget=32")
s, more, _ = check("resumed with budget 32")
if more <= candidates:
    sys.exit(f"the resumed run proposed nothing new ({more} candidates, {candidates} before)")

# gate = all: every explored candidate is verified, not only the front (as on Slurm, where such a
# round's evaluations go with its explorations).
shutil.rmtree(work)
os.makedirs(work)
run("--evaluate.gate=all", "--search.budget=8")
left = [c["id"] for c in summary()["top"] if c["status"] == "explored"]
if left:
    sys.exit(f"gate = all left candidates unverified: {left}")
print("ok: gate = all verifies every explored candidate")

# An objective no run prints: every exploration fails, naming it; nothing can be picked (exit 3).
shutil.rmtree(work)
os.makedirs(work)
run("--intent.objectives=time_s:min, joules:min", "--search.budget=2", expect=3)
s = summary()
reasons = " ".join(s["failures_by_reason"])
if "objective 'joules' missing from output" not in reasons or s["front"]:
    sys.exit(f"a missing objective: reasons {reasons!r}, front {s['front']}")
print("ok: an objective the benchmark does not print fails its explorations, named")
