#!/usr/bin/python3
"""check_results_cli.py FLOTILLA CHECK A.h5 B.h5 CRASHED.h5 SCRATCH — `flotilla results` subcommands
against campaign files produced by the tests (analysis.cmake): analysis.ini run as is (A), with
FLOTILLA_TEST_FACTOR=2 and budget 5 (B), and a campaign SIGKILLed mid-batch (CRASHED).

CHECK is one of: summary history top compare pareto params export crashed errors.
Each check runs the text and the --json form and asserts on both.
"""
import csv
import io
import json
import subprocess
import sys

import h5py

flotilla, check, a_h5, b_h5, crashed_h5, scratch = sys.argv[1:7]


def run(*args, expect_rc=0):
    p = subprocess.run([flotilla, "results", *args], capture_output=True, text=True)
    if p.returncode != expect_rc:
        sys.exit(f"flotilla results {' '.join(args)}: exit {p.returncode}, wanted {expect_rc}\n"
                 f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def js(*args):
    return json.loads(run(*args, "--json").stdout)


def expect(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok:", message)


def aligned(lines):
    """Every line of an all-right-aligned table has the same width."""
    return len({len(line) for line in lines}) == 1


def check_summary():
    s = js("summary", a_h5, "--top", "100")
    p = s["progress"]
    expect((p["candidates"], p["verified"], p["rolled_back"], p["pending"]) == (16, 14, 2, 0),
           f"summary counts {p}")
    expect(s["best"]["objective"] == 41 and s["best"]["config"] == "x=4 y=a z=1", "best is x=4 y=a z=1, score 41")
    expect(s["run"] == {"state": "finished", "complete": True, "pending": 0, "note": ""}, f"run {s['run']}")
    text = run("summary", a_h5)
    expect("best       score 41 (verified" in text.stdout and text.stderr == "", "summary text, no note")


def check_history():
    h = js("history", a_h5)
    rounds = h["rounds"]
    expect([r["candidates"] for r in rounds] == [1, 6, 6, 3], f"candidates per round {rounds}")
    expect(rounds[-1]["best_so_far"] == 41 and rounds[-1]["best_verified_so_far"] == 41, "final best 41")
    evals = h["evaluations"]
    expect(len(evals) == 16 and [e["evaluation"] for e in evals] == list(range(1, 17)), "16 evaluations")
    bests = [e["best_so_far"] for e in evals]
    expect(bests == sorted(bests), "best so far never gets worse")
    expect(all(e["best_so_far"] != 42 for e in evals), "rolled-back 42 never counts as best")
    lines = run("history", a_h5).stdout.splitlines()
    expect(lines[0].startswith("analysis: best score (maximize) so far, per round"), lines[0])
    expect(aligned(lines[1:]) and len(lines) == 6, "round table aligned, header + 4 rounds")
    lines = run("history", a_h5, "--by", "evaluation").stdout.splitlines()
    expect(len(lines) == 18 and "best so far" in lines[1], "evaluation table, header + 16 rows")


def check_top():
    t = js("top", a_h5, "--top", "3")
    top = t["top"]
    expect([c["objective"] for c in top] == [41, 41, 32], f"top objectives {[c['objective'] for c in top]}")
    expect(all(c["status"] == "verified" for c in top) and t["verified_only"], "only verified")
    expect(top[0]["parameters"]["x"] == "4" and top[0]["metrics"]["mem_mb"] == 14, "parameters and metrics")
    lines = run("top", a_h5, "--top", "3").stdout.splitlines()
    header = lines[1].split()
    expect(header == ["rank", "id", "score", "spread", "status", "x", "y", "z", "mem_mb"], f"columns {header}")
    expect(len(lines) == 5 and len({line.index("verified") for line in lines[2:]}) == 1, "aligned rows")
    everything = js("top", a_h5, "--top", "100", "--all")["top"]
    expect(len(everything) == 14, "--all ranks every explored or verified candidate, not rolled back")
    # A parameter and a metric of the same name (threads asked for, threads used) are two
    # columns told apart, the metric's values under metric.threads.
    ini, h5 = f"{scratch}/shared_name.ini", f"{scratch}/shared_name.h5"
    with open(ini, "w") as f:
        f.write("[campaign]\nname = shared_name\nseed = 1\n[intent]\nobjective = score\n"
                "[space]\nparam = threads: int: 1,2\n"
                "[explore]\ncommand = sh -c 'echo flotilla-metric: score=$0 threads=$(( 4 * $0 ))' {threads}\n"
                "repeats = 1\n[search]\nstrategy = grid\nbudget = 2\n")
    subprocess.run(["rm", "-rf", h5])
    subprocess.run([flotilla, "run", ini, f"--campaign.results={h5}", "--no-live"], check=True, capture_output=True)
    lines = run("top", h5).stdout.splitlines()
    header = lines[1].split()
    expect(header == ["rank", "id", "score", "spread", "status", "threads", "metric.threads"], f"columns {header}")
    expect(lines[2].split()[-2:] == ["2", "8"], f"the parameter's value, then the metric's: {lines[2]}")


def check_compare():
    c = js("compare", a_h5, b_h5)
    expect(c["campaigns"][1]["shared"] == 6, f"6 shared configurations: {c['campaigns'][1]}")
    expect(abs(c["campaigns"][1]["geomean_ratio"] - 2.0) < 1e-12, "geometric-mean ratio 2")
    expect(len(c["rows"]) == 16, "every configuration of either campaign is a row")
    common = js("compare", a_h5, b_h5, "--common")
    expect(len(common["rows"]) == 6, "--common keeps the shared ones")
    text = run("compare", a_h5, b_h5).stdout
    expect("2.00x" in text and "reference" in text, "text shows the ratio and the reference")
    run("compare", a_h5, expect_rc=1)


def check_pareto():
    p = js("pareto", a_h5, "--objectives", "score:max,mem_mb:min")
    front = sorted((pt["values"][0], pt["values"][1]) for pt in p["points"] if pt["front"] == 1)
    expect(front == sorted([(12, 3), (12, 3), (22, 6), (22, 6), (32, 9), (32, 9), (41, 14), (41, 14)]),
           f"front 1 {front}")
    expect(all(pt["candidate"]["status"] != "rolled_back" for pt in p["points"]), "rolled back excluded")
    text = run("pareto", a_h5, "--objectives", "score,mem_mb:min")
    expect(len(text.stdout.splitlines()) == 2 + 8, "text lists front 1")
    err = run("pareto", a_h5, expect_rc=1).stderr
    expect("pareto needs two or more metrics, e.g. --objectives score:max,time_s:min" in err, err.strip())
    err = run("pareto", a_h5, "--objectives", "score,mem_mb", expect_rc=1).stderr
    expect("say whether 'mem_mb' is better high or low: mem_mb:max or mem_mb:min" in err, err.strip())


def check_params():
    p = js("params", a_h5)
    names = [q["name"] for q in p["parameters"]]
    imp = {q["name"]: q["importance"] for q in p["parameters"]}
    expect(names[0] == "x" and imp["x"] > 0.9 and imp["y"] < 1e-9, f"x matters most, y not at all: {imp}")
    expect(p["samples"] == 16, "every explored candidate is a sample")
    m = js("params", a_h5, "--metric", "mem_mb:min")
    expect(m["parameters"][0]["values"][0]["value"] == "1", "mem_mb: x=1 is the best value")
    text = run("params", a_h5).stdout
    expect("interactions and noise" in text and "\n  x " in text, "text table")


def check_export():
    rows = list(csv.DictReader(io.StringIO(run("export", a_h5).stdout)))
    expect(len(rows) == 16, "16 candidate rows")
    expect({"id", "status", "objective", "x", "y", "z", "metric.score", "metric.mem_mb"} <= set(rows[0]),
           f"columns {list(rows[0])}")
    with h5py.File(a_h5, "r", swmr=True) as f:
        n_trials, n_events = len(f["trials"]), len(f["events"])
    trials = js("export", a_h5, "--table", "trials")
    expect(len(trials["rows"]) == n_trials and trials["rows"][0]["kind"] == "explore", "trials as JSON")
    out = f"{scratch}/events.csv"
    run("export", a_h5, "--table", "events", "-o", out)
    with open(out, newline="") as f:
        expect(len(list(csv.DictReader(f))) == n_events, "events to a file")
    run("export", a_h5, "--table", "nope", expect_rc=1)


def check_crashed():
    s = js("summary", crashed_h5)
    expect(s["run"]["state"] == "stopped" and not s["run"]["complete"], f"flagged incomplete: {s['run']}")
    for sub in (["summary"], ["history"], ["top"], ["params"], ["export"], ["compare", crashed_h5]):
        p = run(sub[0], crashed_h5, *sub[1:])
        expect("incomplete: the campaign stopped without finishing" in p.stderr, f"{sub[0]}: note on stderr")
    expect("note:" not in run("export", crashed_h5).stdout, "the note stays out of the CSV")


def check_errors():
    foreign, future = f"{scratch}/foreign.h5", f"{scratch}/future.h5"
    with h5py.File(foreign, "w") as f:
        f["data"] = [1, 2, 3]
    with h5py.File(a_h5, "r", swmr=True) as src, h5py.File(future, "w") as dst:
        dst.attrs["flotilla_schema"] = 7
        for name in src:
            src.copy(name, dst)
    for sub in ("summary", "history", "top", "params", "export"):
        err = run(sub, foreign, expect_rc=1).stderr
        expect(f"{foreign}: not a flotilla campaign file (no 'flotilla_schema' attribute on /)" in err, f"{sub}: foreign")
        err = run(sub, future, expect_rc=1).stderr
        expect(f"{future}: schema version 7 is not supported by flotilla" in err, f"{sub}: schema 7")
    err = run("summary", f"{scratch}/missing.h5", expect_rc=1).stderr
    expect("missing.h5: no such file" in err, "missing file")
    err = run("nonsense", a_h5, expect_rc=1).stderr
    expect("unknown subcommand 'nonsense'" in err, "unknown subcommand")
    expect("compare" in run("--help").stdout, "help lists the subcommands")


globals()[f"check_{check}"]()
