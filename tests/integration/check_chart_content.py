#!/usr/bin/python3
"""check_chart_content.py FLOTILLA FILE.h5 CHECK OUTDIR — what a chart of `flotilla results plot`
shows, read from the `chart` member of its --json reply (the data the chart was drawn from), on a
campaign file written by flotilla here. CHECK names the campaign and chart:

  rollback_convergence  rollback.ini: 12 verified points, 4 rolled back, nothing clipped
  outlier_convergence   rollback.ini whose x=8 scores 500 (rolled back): those two points leave the
                        axis, marked above it; every other score (1..7) stays inside the y range
  rollback_tests        rollback.ini: shards against the baseline, 3 regressions for each of the
                        4 rolled-back candidates (x=7, 8), none for the rest
  analysis_pareto       analysis.ini: every point strictly inside both axes, front 1 labelled with
                        ids, points at one place sharing one label
  analysis_params       analysis.ini (a full grid): the shares add up to 100%, no warning
  rollback_timeline     rollback.ini on 2 local slots: 2 lanes (not one per confirmation pair), 4 rounds
  compat_tests          configs/compat.ini: per-test outcomes against the baseline; variant b's 4
                        candidates (rolled back) have the baseline's counts but 1 regression and
                        1 fix each, variant a's none
"""
import json
import os
import subprocess
import sys

flotilla, h5, check, outdir = sys.argv[1:5]
os.makedirs(outdir, exist_ok=True)
kind = check.split("_", 1)[1]
extra = ["--objectives", "score:max,mem_mb:min"] if kind == "pareto" else []
out = os.path.join(outdir, f"{check}.png")
p = subprocess.run([flotilla, "results", "plot", h5, "--kind", kind, "-o", out, "--json", *extra],
                   capture_output=True, text=True)
if p.returncode != 0:
    sys.exit(f"plot {kind} failed ({p.returncode}): {p.stderr}")
chart = json.loads(p.stdout)["chart"]


def expect(condition, what):
    if not condition:
        sys.exit(f"{check}: {what}\nchart: {json.dumps(chart)[:2000]}")


if check == "rollback_convergence":
    expect(chart["points"] == {"verified": 12, "rolled_back": 4}, "12 verified and 4 rolled-back points")
    expect(chart["clipped"] == [], "nothing clipped")
    low, high = chart["y_range"]
    expect(low < 1 and high > 8, "the y range holds every score, 1 to 8")
elif check == "outlier_convergence":
    clipped = chart["clipped"]
    expect(len(clipped) == 2 and all(c["value"] == 500 and c["side"] == "above" for c in clipped),
           "the two scores of 500 are clipped, above the axis")
    low, high = chart["y_range"]
    expect(low < 1 and 7 < high < 50, "the y range fits scores 1..7, not 500")
elif check == "rollback_tests":
    rows = {r["candidate"]: r for r in chart["rows"]}
    expect(not chart["per_test"] and chart["baseline"] == 0, "shards compared against candidate 0")
    rolled = [r for r in rows.values() if r["status"] == "rolled_back"]
    expect(len(rolled) == 4 and all(r["regressions"] == 3 and r["failed"] == 3 for r in rolled),
           "4 rolled-back candidates, 3 regressions each")
    expect(all(r["regressions"] == 0 for r in rows.values() if r["status"] != "rolled_back"),
           "no regression in any other candidate")
    expect(chart["regressions"] == 12 and chart["fixes"] == 0, "12 regressions, 0 fixes in all")
elif check == "analysis_pareto":
    (x0, x1), (y0, y1) = chart["x_range"], chart["y_range"]
    points = chart["points"]
    expect(all(x0 < p["x"] < x1 and y0 < p["y"] < y1 for p in points), "every point strictly inside the axes")
    front = [p for p in points if p["front"] == 1]
    expect(front, "a front")
    places = {}
    for p in points:
        places.setdefault((p["x"], p["y"]), []).append(p)
    for at in places.values():
        if at[0]["front"] != 1:
            continue
        labelled = [p for p in at if p["label"]]
        words = labelled[0]["label"].replace(",", " ").split() if len(labelled) == 1 else []
        expect(all(f"#{p['candidate']}" in words for p in at),
               f"one label naming every front candidate at {at[0]['x']}, {at[0]['y']}")
elif check == "analysis_params":
    expect(abs(chart["sum_percent"] - 100) < 1 and not chart["warning"], "shares add up to 100%, no warning")
    remainder = [b for b in chart["bars"] if b["remainder"]]
    expect(len(remainder) == 1 and remainder[0]["percent"] is not None and remainder[0]["percent"] < 1,
           "interactions + noise near 0% on a full grid of an additive score")
elif check == "rollback_timeline":
    expect(len(chart["lanes"]) == 2, "two lanes for two slots")
    expect([r["round"] for r in chart["rounds"]] == [0, 1, 2, 3], "rounds 0 to 3")
    expect(all(r["wait"] >= 0 and r["first_start"] is not None for r in chart["rounds"]), "each round started")
elif check == "compat_tests":
    expect(chart["per_test"] and chart["baseline"] == 0, "per-test outcomes compared against candidate 0")
    rows = chart["rows"]
    base = next(r for r in rows if r["baseline"])
    rolled = [r for r in rows if r["status"] == "rolled_back"]
    expect(len(rolled) == 4 and all(r["regressions"] == 1 and r["fixes"] == 1 for r in rolled),
           "4 rolled-back candidates with 1 regression and 1 fix each")
    expect(all((r["passed"], r["failed"]) == (base["passed"], base["failed"]) for r in rolled),
           "their counts equal the baseline's: only the diff tells them apart")
    expect(all(r["regressions"] == 0 and r["fixes"] == 0 for r in rows if r["status"] != "rolled_back"),
           "nothing changed in the other candidates")
else:
    sys.exit(f"unknown check {check}")
print(f"ok: {check}")
