#!/usr/bin/python3
"""check_wall_time.py FLOTILLA WALL_TIME.INI WORK [OVERRIDE...] — intent.objective = wall_time
(docs/metrics.md): flotilla times the explore command itself.

The campaign's commands are `sleep 0.3` (the baseline) and `sleep 0.1`, which print nothing. It
must end with the shorter one as the winner, verified and confirmed faster; every explore trial
carries the metric wall_time, the runner's measurement, about as long as its sleep; each
confirmation pair is a trial of its own time; each candidate had one warm-up run
(explore.warmup = auto); and a wall_time that maximizes is refused.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys

flotilla, ini, work, *overrides = sys.argv[1:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
h5 = os.path.join(work, "wall_time.h5")


def check(ok, what, detail=""):
    if not ok:
        sys.exit(f"FAILED: {what}\n{detail}")
    print("ok:", what)


p = subprocess.run([flotilla, "run", ini, f"--campaign.results={h5}", "--no-live", *overrides], cwd=work,
                   capture_output=True, text=True, timeout=300)
check(p.returncode == 0, "the campaign of sleeps finishes", p.stdout + p.stderr)
s = json.loads(subprocess.run([flotilla, "results", "summary", h5, "--json"], check=True, capture_output=True,
                              text=True).stdout)
best = s["best"] or {}
check(s["campaign"]["direction"] == "minimize", "wall_time is minimized", s["campaign"])
check(best.get("config") == "nap=0.1" and best.get("status") == "verified", "the shorter sleep wins, verified",
      json.dumps(best))
check(s["best_confirmed"] and best["confirmation"]["verdict"] == "faster" and best["confirmation"]["ratio"] > 2,
      f"and is confirmed faster than the baseline ({best.get('confirmation')})", p.stdout)
rows = list(csv.DictReader(io.StringIO(subprocess.run([flotilla, "results", "export", h5, "--table", "trials"],
                                                      check=True, capture_output=True, text=True).stdout)))
explore = [r for r in rows if r["kind"] == "explore"]
naps = {0: 0.3, 1: 0.1}
for r in explore:
    seconds = float(r["metric.wall_time"]) if r.get("metric.wall_time") else float("nan")
    nap = naps[int(r["candidate"])]
    check(nap <= seconds < nap + 0.25 and float(r["objective"]) == seconds,
          f"candidate {r['candidate']} repeat {r['index']}: wall_time {seconds:.4f} s for sleep {nap}", r)
check(len(explore) >= 6, f"{len(explore)} explore trials")
# Each confirmation pair is a trial with its own time (a 0.3 s and a 0.1 s sleep, one after the
# other), the pairs one after another: not each the whole confirmation task's span, which made
# the pairs' durations add up to many times the campaign.
pairs = sorted((r for r in rows if r["kind"] == "confirm" and r["status"] == "ok"), key=lambda r: int(r["index"]))
check(len(pairs) >= 2, f"{len(pairs)} confirmation pairs")
for r in pairs:
    check(0.4 <= float(r["duration_s"]) < 0.4 + 0.35, f"pair {r['index']} took {float(r['duration_s']):.3f} s", r)
check(all(float(a["end"]) <= float(b["start"]) for a, b in zip(pairs, pairs[1:])), "the pairs one after another",
      [(r["start"], r["end"]) for r in pairs])
span = max(float(r["end"]) for r in rows) - min(float(r["start"]) for r in rows)
check(sum(float(r["duration_s"]) for r in pairs) < span, f"their sum is less than the campaign's {span:.2f} s")
warmups = sorted(int(r["candidate"]) for r in rows if r["kind"] == "warmup")
check(warmups == [0, 1], f"one warm-up run per candidate: {warmups}")

p = subprocess.run([flotilla, "run", ini, f"--campaign.results={os.path.join(work, 'max.h5')}",
                    "--intent.direction=maximize"], cwd=work, capture_output=True, text=True)
check(p.returncode == 1 and "command line: [intent] direction: 'maximize' is not minimize, and intent.objective = "
      "wall_time is a time to minimize" in p.stderr, "a wall_time to maximize is refused", p.stderr)
