#!/usr/bin/python3
"""check_hostile_plots.py FLOTILLA WORK — a results file is data someone may send: no string in it
runs anything when `flotilla results plot` draws it (issue 32).

gnuplot runs `backquotes` inside double-quoted strings, and a line "EOD" inside an inline data
block ends the block, so whatever follows runs as commands. This campaign (a TAP suite whose test
names are hostile too) is edited with h5py so that every text field that reaches a chart carries
backquotes, an @macro, quotes, and a newline + EOD + system("touch ..."): the campaign name (every
title), the trials' host (the timeline's lane labels), the parameter names and the configurations
(the params bars and the Pareto point labels), the objective and a second metric's name (titles and
axis labels), and a proposal's name (the lineage's node labels). Every --kind then draws its chart,
with --script, from a folder of its own: the chart is drawn, it shows the hostile text, and no file
named PWN* appears (each payload touches one, relative to gnuplot's working directory, which is
flotilla's).
"""
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

FLOTILLA, WORK = sys.argv[1:3]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

# ${IFS}: parameter names cannot hold a blank (a configuration is "name=value name=value").
NAME = "camp`touch PWN_name` @GPVAL_PWD 'q' \"dq\"\nEOD\nsystem(\"touch PWN_name_eod\")\n"
HOST = "h`touch PWN_host`'\"@x\nEOD\nsystem('touch PWN_host_eod')"
PARAM_X = "x`touch${IFS}PWN_param`'\"@GPVAL_PWD"
PARAM_Y = "y\nEOD\nsystem('touch${IFS}PWN_param_eod')\n#"
OBJECTIVE = "score`touch PWN_objective`'\"\nEOD\n"
PROPOSAL = "p`touch PWN_proposal`'\"@GPVAL_PWD\nEOD\nsystem('touch PWN_p')"
METRIC = "mem`touch PWN_metric`'\"@GPVAL_PWD"

tap = os.path.join(WORK, "tap.sh")
with open(tap, "w") as f:
    f.write("""printf '%s\\n' '1..3' "ok 1 - t\\`touch PWN_test\\` @GPVAL_PWD 'q'" 'ok 2 - t $(touch PWN_test2)' \\
  'ok 3 - t3 "dq"' > "$1"
""")
ini = os.path.join(WORK, "hostile_plots.ini")
h5 = os.path.join(WORK, "hostile_plots.h5")
with open(ini, "w") as f:
    f.write(f"""[campaign]
name = hostile_plots
results = {h5}
[intent]
objective = score
baseline = x=1 y=1
[space]
param = x: int: 1..3
param = y: int: 1..2
[explore]
command = sh -c 'echo flotilla-metric: score=$(($0 * 2 + $1)) mem=$((20 - $0 - 3 * $1))' {{x}} {{y}}
repeats = 1
[evaluate]
command = sh {tap} {{report}}
suite = tap
list = none
shards = 1
gate = all
[confirm]
enabled = false
[search]
strategy = grid
budget = 5
batch = 5
""")
run = subprocess.run([FLOTILLA, "run", ini, "--no-live"], capture_output=True, text=True, cwd=WORK)
if run.returncode != 0:
    sys.exit(f"flotilla run: exit {run.returncode}\n{run.stdout}\n{run.stderr}")


def fixed(text, size):
    data = text.encode()
    assert len(data) < size, f"{text!r} does not fit {size} bytes"
    return data


with h5py.File(h5, "r+") as f:
    campaign = f["campaign"]
    for attr, value in (("name", NAME), ("objective", OBJECTIVE)):
        data = value.encode()
        del campaign.attrs[attr]
        campaign.attrs.create(attr, data, dtype=h5py.string_dtype("utf-8", len(data) + 1))
    trials = f["trials"][:]
    trials["host"] = fixed(HOST, 64)
    f["trials"][:] = trials
    metrics = f["metrics"][:]
    renamed = {b"score": fixed(OBJECTIVE, 64), b"mem": fixed(METRIC, 64)}
    metrics["name"] = [renamed.get(bytes(n), n) for n in metrics["name"]]
    f["metrics"][:] = metrics
    candidates = f["candidates"][:]
    configs = []
    for c in candidates["config"]:
        values = dict(word.split("=") for word in bytes(c).decode().split())
        configs.append(fixed(f"{PARAM_X}={values['x']} {PARAM_Y}={values['y']}", 1024))
    candidates["config"] = configs
    # Candidate 1 becomes a proposer's candidate, on the baseline, under a hostile proposal name
    # (the lineage chart's node label and title).
    candidates["origin"][1] = b"proposal 0"
    f["candidates"][:] = candidates
    proposals = f["proposals"]
    row = np.zeros(1, dtype=proposals.dtype)
    row["round"], row["parent"], row["status"], row["time"] = 1, 0, 0, 1.0
    row["name"] = fixed(PROPOSAL, 64)
    proposals.resize((1,))
    proposals[0] = row[0]

failures = []
objectives = f"{OBJECTIVE}:max,{METRIC}:min"
for kind, extra, shows in (
        ("convergence", [], lambda chart: chart["points"]),
        ("pareto", ["--objectives", objectives], lambda chart: any(PARAM_X in p["label"] for p in chart["points"])),
        ("params", ["--metric", f"{METRIC}:min"], lambda chart: {PARAM_X, PARAM_Y} <= {b["label"] for b in chart["bars"]}),
        ("timeline", [], lambda chart: all(lane["label"].startswith(HOST) for lane in chart["lanes"])),
        ("tests", [], lambda chart: chart["per_test"] and chart["rows"]),
        ("lineage", [], lambda chart: any(n["name"] == PROPOSAL for n in chart["nodes"]))):
    here = os.path.join(WORK, kind)
    os.makedirs(here)
    out, script = os.path.join(here, f"{kind}.png"), os.path.join(here, f"{kind}.gp")
    p = subprocess.run([FLOTILLA, "results", "plot", h5, "--kind", kind, "-o", out, "--script", script, "--json",
                        *extra], capture_output=True, text=True, cwd=here)
    before = len(failures)
    ran = sorted(name for name in os.listdir(here) if name.startswith("PWN"))
    if ran:
        failures.append(f"{kind}: the results file's strings ran commands, which made {ran}")
    if p.returncode != 0 or not os.path.exists(out) or os.path.getsize(out) < 1000:
        failures.append(f"{kind}: no chart (exit {p.returncode}): {p.stderr.strip()[-600:]}")
    elif not shows(json.loads(p.stdout)["chart"]):
        failures.append(f"{kind}: the chart does not show the hostile text: {p.stdout[:600]}")
    elif len(failures) == before:
        print(f"ok: {kind}: drawn ({os.path.getsize(out)} bytes), nothing ran")
if failures:
    sys.exit("FAILED\n" + "\n".join(failures))
