#!/usr/bin/python3
"""A campaign killed half-way through a candidate's evaluation finishes it on resume, even when
the gate has moved, and every decided candidate gets its journal event.

usage: check_resume_half_evaluated.py FLOTILLA ROLLBACK_INI WORK

rollback.ini with `gate = top 2 per round`: the two best candidates of a round are evaluated in
one wave, the better one (B) first. The test runs the campaign to the end, then makes the file
of a run killed just after B's last shard and A's first: it cuts /trials there, and the other
tables at that moment. (The rows it keeps are exactly what that run had recorded.) Resuming,
B is verified and better than A, so the gate alone would skip A: it was left at 1 of 3 shards
for ever. It must finish A's evaluation, and record the verified / rolled_back event that the
killed run never wrote.
"""
import json
import os
import shutil
import subprocess
import sys

import h5py

FLOTILLA, INI, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
full, cut = os.path.join(WORK, "full.h5"), os.path.join(WORK, "cut.h5")
for f in (full, cut):
    if os.path.exists(f):
        os.remove(f)
# Without confirmation the incumbent is the best verified candidate, so B moves the gate at once.
ARGS = ["--evaluate.gate=top 2 per round", "--resources.slots=2", "--confirm.enabled=false", "--no-live"]


def check(ok, what):
    if not ok:
        sys.exit(f"FAILED: {what}")


subprocess.run([FLOTILLA, "run", INI, f"--campaign.results={full}", *ARGS], check=True, capture_output=True)
shutil.copy(full, cut)
with h5py.File(cut, "r+") as f:
    trials = f["trials"][:]
    kinds = {v: k for k, v in h5py.check_enum_dtype(trials.dtype["kind"]).items()}
    evaluate = [(i, int(t["candidate"]), int(t["index"])) for i, t in enumerate(trials) if kinds[int(t["kind"])] == "evaluate"]
    # The first row after which some candidate has all 3 shards and another, started later in the
    # same wave, has 1 or 2.
    done, point, half = {}, None, None
    for row, cand, index in evaluate:
        done.setdefault(cand, set()).add(index)
        complete = [c for c, s in done.items() if len(s) == 3 and c != 0]  # 0: the baseline
        partial = [c for c, s in done.items() if 0 < len(s) < 3]
        if complete and partial and max(complete) < min(partial):
            point, half = row, min(partial)
            break
    check(point is not None, f"no half-evaluated moment in this run: {evaluate}")
    moment = float(trials[point]["end"])
    f["trials"].resize((point + 1,))
    metrics = f["metrics"][:]
    f["metrics"].resize((sum(1 for m in metrics if int(m["trial"]) <= point),))
    for table in ("events", "estimates", "confirmations"):
        rows = f[table][:]
        keep = sum(1 for r in rows if float(r["time"]) <= moment)
        f[table].resize((keep,))
    events = [(e["kind"].decode(), e["detail"].decode()) for e in f["events"][:]]
check(not any(d.startswith(f"candidate {half}:") for k, d in events if k in ("verified", "rolled_back")),
      "the cut file already decided the half-evaluated candidate")

run = subprocess.run([FLOTILLA, "run", INI, f"--campaign.results={cut}", *ARGS], capture_output=True, text=True)
check(run.returncode == 0, f"resume failed: {run.stderr}")
summary = json.loads(subprocess.run([FLOTILLA, "results", "summary", cut, "--json", "--top", "100"],
                                    capture_output=True, text=True, check=True).stdout)
statuses = {c["id"]: c["status"] for c in summary["top"] + summary["rolled_back"]}
check(statuses.get(half) in ("verified", "rolled_back"), f"candidate {half} was left {statuses.get(half)}")
with h5py.File(cut, "r") as f:
    trials = f["trials"][:]
    kinds = {v: k for k, v in h5py.check_enum_dtype(trials.dtype["kind"]).items()}
    shards = {int(t["index"]) for t in trials if kinds[int(t["kind"])] == "evaluate" and int(t["candidate"]) == half}
    events = [(e["kind"].decode(), e["detail"].decode()) for e in f["events"][:]]
check(shards == {0, 1, 2}, f"candidate {half}: shards {shards}")
decided = [c for c, s in statuses.items() if s in ("verified", "rolled_back")]
for c in decided:
    n = sum(1 for k, d in events if k in ("verified", "rolled_back") and d.startswith(f"candidate {c}:"))
    check(n == 1, f"candidate {c} ({statuses[c]}) has {n} decision events")
print(f"ok: candidate {half} finished after the cut at trial row {point}; {len(decided)} decisions journaled once")
