#!/usr/bin/python3
"""check_chart_content.py FLOTILLA FILE.h5 CHECK OUTDIR — what a chart of `flotilla results plot`
shows, read from the `chart` member of its --json reply (the data the chart was drawn from), on a
campaign file written by flotilla here. CHECK names the campaign and chart:

  rollback_convergence  rollback.ini: 12 verified points, 4 rolled back, nothing clipped; the winner
                        (candidate 10, confirmed faster) marked and named in the title, which says
                        the curves are the best so far by median; whole-number ticks for whole scores
  tdd_convergence       configs/tdd.ini (tests.passed, a count): whole-number ticks, the axis from 1,
                        the winner (candidate 8, 40 files) marked at the top with room for its label
  propose_convergence   configs/propose.ini: the proposal that does not build is evaluation 4, in its
                        place (marked as failed), not evaluation 1 before the baseline
  outlier_convergence   rollback.ini whose x=8 scores 500 (rolled back): those two points leave the
                        axis, marked above it; every other score (1..7) stays inside the y range
  rollback_tests        rollback.ini: shards against the baseline, 3 regressions for each of the
                        4 rolled-back candidates (x=7, 8), none for the rest
  analysis_pareto       analysis.ini: every point strictly inside both axes, front 1 labelled with
                        ids, points at one place sharing one label, no label over a point
  analysis_params       analysis.ini (a full grid): the shares add up to 100%, no warning
  rollback_timeline     rollback.ini on 2 local slots: 2 lanes (not one per confirmation pair), 4 rounds
  compat_tests          configs/compat.ini: per-test outcomes against the baseline; variant b's 4
                        candidates (rolled back) have the baseline's counts but 1 regression and
                        1 fix each, variant a's none
  builds_timeline       build_stage.ini on 1 slot, 2 candidates a round (so later rounds share
                        earlier builds): one lane (copies of a shared build draw none), builds in a
                        colour and legend entry of their own, and no round's first task before
                        its proposal (a copy carries its build's earlier start)
  resumed_timeline      rollback.ini run to budget 5, then 2 s later resumed to 15: the 2 s between
                        the runs are not running time, and are shown as such
  tdd_lineage           configs/tdd.ini: the winner's line of eight (baseline to errors) straight
                        along the top row, compare_broken (rolled back) below it off unary_minus
  propose_lineage       configs/propose.ini: the baseline's three proposals (one rolled back, one
                        that does not build) and row_pointers on interchange; the winner's line
                        (whichever its confirmation picked) along the top row
  analysis_lineage      analysis.ini, which no proposer wrote: refused with its reason
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
if check == "analysis_lineage":
    wanted = "flotilla results: nothing to plot: no proposer wrote a candidate in this campaign"
    if p.returncode != 1 or p.stderr.strip() != wanted:
        sys.exit(f"{check}: wanted exit 1 and {wanted!r}, got {p.returncode}: {p.stderr!r}")
    print(f"ok: {check}")
    sys.exit(0)
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
    expect(chart["winner"]["candidate"] == 10 and chart["winner"]["value"] == 6, "the winner, candidate 10, is marked")
    title = chart["title"]
    expect("best so far by median" in title and "winner (ringed): candidate 10, 6x" in title,
           "the title says what the curves are and names the winner")
    expect(chart["y_step"] == 1 and chart["x_range"] == [0.5, 16.5], "whole-number ticks; the x axis from 1")
elif check == "tdd_convergence":
    expect(chart["y_step"] is not None and chart["y_step"] >= 1 and chart["y_step"] == int(chart["y_step"]),
           "whole-number ticks for a count")
    expect(chart["x_range"][0] == 0.5 and chart["failed"] == [], "the x axis from 1, nothing failed")
    low, high = chart["y_range"]
    expect(chart["winner"] == {"candidate": 8, "evaluation": 9, "value": 40.0}, "the winner errors, marked")
    expect(high >= 40 + 0.15 * (high - low), "room above the winner for its label")
    expect("winner (ringed): candidate 8, the best verified tests.passed (40)" in chart["title"]
           and "by median" not in chart["title"], "a count's title says no median")
elif check == "propose_convergence":
    expect(chart["failed"] == [{"evaluation": 4, "candidate": 3}], "the failed build is evaluation 4")
    expect(chart["x_range"][0] == 0.5 and chart["points"].get("verified", 0) >= 1, "the axis from 1, the baseline on it")
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
    mx, my = chart["marker"]
    for p in points:
        box = p.get("label_box")
        if not box:
            continue
        (bx0, bx1), (by0, by1) = box["x"], box["y"]
        expect(x0 < bx0 and bx1 < x1 and y0 < by0 and by1 < y1, f"the label of #{p['candidate']} inside the axes")
        covered = [q["candidate"] for q in points
                   if bx0 - mx < q["x"] < bx1 + mx and by0 - my < q["y"] < by1 + my]
        expect(not covered, f"the label of #{p['candidate']} ({box['place']}) covers no point: {covered}")
elif check == "analysis_params":
    expect(abs(chart["sum_percent"] - 100) < 1 and not chart["warning"], "shares add up to 100%, no warning")
    remainder = [b for b in chart["bars"] if b["remainder"]]
    expect(len(remainder) == 1 and remainder[0]["percent"] is not None and remainder[0]["percent"] < 1,
           "interactions + noise near 0% on a full grid of an additive score")
elif check == "rollback_timeline":
    expect(len(chart["lanes"]) == 2, "two lanes for two slots")
    expect([r["round"] for r in chart["rounds"]] == [0, 1, 2, 3], "rounds 0 to 3")
    expect(all(r["wait"] >= 0 and r["first_start"] is not None for r in chart["rounds"]), "each round started")
elif check == "builds_timeline":
    expect(len(chart["lanes"]) == 1, f"one lane on one slot: {chart['lanes']}")
    colors = {e["title"]: e["color"] for e in chart["legend"]}
    expect("build" in colors and colors["build"] not in (colors.get("cancelled"), "#9a9a9a")
           and list(colors.values()).count(colors["build"]) == 1, f"builds have a colour of their own: {colors}")
    started = [r for r in chart["rounds"] if r["first_start"] is not None]
    expect(len(started) >= 3 and all(r["first_start"] >= r["proposed"] for r in started),
           "no round's first task started before the round was proposed")
    expect(chart["longest_wait"] == max(r["wait"] for r in chart["rounds"]), "the longest wait is the rounds' longest")
elif check == "resumed_timeline":
    expect(chart["running_s"] <= chart["span_s"] - 2, f"{chart['running_s']} s running of {chart['span_s']} s")
    expect(len(chart["stopped"]) == 1 and chart["stopped"][0][1] - chart["stopped"][0][0] >= 2,
           f"the pause between the runs is shown: {chart['stopped']}")
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
elif check in ("tdd_lineage", "propose_lineage"):
    nodes = {n["candidate"]: n for n in chart["nodes"]}
    places = [(n["depth"], n["row"]) for n in chart["nodes"]]
    expect(len(set(places)) == len(places), "no two nodes share a place")
    line = chart["lineage"]
    expect(chart["winner"] == line[-1] and [nodes[i]["on_path"] for i in nodes] == [i in line for i in nodes],
           "the winner ends its line, and the line's nodes alone are marked on it")
    expect([(nodes[i]["depth"], nodes[i]["row"]) for i in line] == [(d, 0) for d in range(len(line))],
           "the winner's line runs along the top row, one generation a column")
    expect(all(n["parent"] is None or nodes[n["parent"]]["depth"] + 1 == n["depth"] for n in nodes.values()),
           "each node one column right of its parent")
    if check == "tdd_lineage":
        expect(line == [0, 1, 2, 3, 5, 6, 7, 8] and len(nodes) == 9, "nine nodes, the winner errors at the end of eight")
        broken = nodes[4]
        expect((broken["name"], broken["status"], broken["parent"], broken["depth"], broken["row"], broken["label"])
               == ("compare_broken", "rolled_back", 3, 4, 1, "compare_broken"),
               "compare_broken rolled back, off unary_minus on the second row")
        expect([nodes[i]["value_label"] for i in line] == ["10", "18", "22", "26", "30", "33", "37", "40"],
               "each node of the line labelled with its tests.passed")
        expect("errors (candidate 8), tests.passed 40" in chart["title"], "the title names the winner and its count")
    else:
        expect(len(nodes) == 5 and chart["rows"] == 3 and nodes[0]["name"] == "baseline" and nodes[0]["parent"] is None,
               "the baseline and four proposals on three rows")
        expect([(nodes[i]["name"], nodes[i]["status"], nodes[i]["parent"]) for i in (1, 2, 3, 4)] ==
               [("interchange", "verified", 0), ("skip_half_k", "rolled_back", 0),
                ("no_such_helper", "build_failed", 0), ("row_pointers", "verified", 1)],
               "what became of each proposal, and on what it was built")
        expect(nodes[3]["value_label"] == "build failed", "a build that failed says so")
        winner = nodes[chart["winner"]]
        expect(winner["value_label"] == f"{winner['ratio']:.3g}x confirmed", "the winner carries its confirmed speed-up")
else:
    sys.exit(f"unknown check {check}")
print(f"ok: {check}")
