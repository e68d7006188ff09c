#!/usr/bin/python3
"""bench/propose: what proposers cost and what they buy (docs/propose.md).

usage: bench/propose/run.py BUILD_DIR [--repeats N] [--proposals P] [--cost-repeats C]

  1. flotilla's own cost per proposal (context written, proposal judged, chain applied) at 10 and
     1,000 recorded candidates: BUILD_DIR/bench/propose_cost --repeats C (7; target: at most 50 ms
     at 1,000), next to one copy of the source tree measured in the same run;
  2. configs/tdd.ini end to end, N times: rounds and wall time until every file passes, and the
     pass count per round;
  3. a fleet: 4 proposers at once against 1, each run taking 1 s and writing one proposal,
     P (16) proposals in all, on the local backend: proposals per minute, N times each, interleaved.

Ends with one JSON line, and exits 1 when the correctness half fails (propose_cost's own check,
tdd.ini not reaching all 40 tests or climbing differently between runs, a fleet not spending its
budget of P proposals). Full size: the defaults (--repeats 3 --proposals 16 --cost-repeats 7); runs
in bench/propose/RESULTS.md. The ctest bench_propose_runs runs --repeats 1 --proposals 4
--cost-repeats 1.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--proposals", type=int, default=16, help="each fleet's budget of proposals")
    parser.add_argument("--cost-repeats", type=int, default=7, help="propose_cost's --repeats")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    flotilla = os.path.join(build, "bin", "flotilla")
    env = dict(os.environ, PATH=os.path.join(build, "bin") + ":" + os.environ.get("PATH", ""))
    work = tempfile.mkdtemp(prefix="flotilla-bench-propose.")
    out = {"bench": "propose"}
    try:
        # 1. The scheduler's own cost.
        run = subprocess.run([os.path.join(build, "bench", "propose_cost"), "--repeats", str(args.cost_repeats)],
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"bench/propose: propose_cost failed (exit {run.returncode}):\n{run.stderr}")
        cost = json.loads(run.stdout.splitlines()[-1])
        out["ms_per_proposal_at_10"] = cost["ms_per_proposal_at_10"]
        out["ms_per_proposal_at_1000"] = cost["ms_per_proposal_at_1000"]
        out["cost"] = cost["sizes"]
        print(f"cost per proposal: {cost['ms_per_proposal_at_10']:.1f} ms at 10 candidates, "
              f"{cost['ms_per_proposal_at_1000']:.1f} ms at 1,000 (target 50)", file=sys.stderr)

        # 2. configs/tdd.ini end to end.
        walls, rounds, climbs = [], [], []
        for r in range(args.repeats):
            h5 = os.path.join(work, f"tdd{r}.h5")
            start = time.monotonic()
            subprocess.run([flotilla, "run", "configs/tdd.ini", f"--campaign.results={h5}", "--no-live"], cwd=ROOT,
                           env=env, capture_output=True, text=True, check=True)
            walls.append(time.monotonic() - start)
            s = json.loads(subprocess.run([flotilla, "results", "summary", h5, "--json", "--top", "100"], env=env,
                                          capture_output=True, text=True, check=True).stdout)
            by_id = {c["id"]: c for c in s["top"] + s["rolled_back"]}
            climb = [by_id[i]["objective"] for i in s["lineage"]]
            climbs.append(climb)
            rounds.append(max(c["round"] for c in by_id.values()))
        out["tdd"] = {"wall_s": spread(walls), "rounds_to_all_files": spread(rounds), "passed_per_step": climbs[0],
                      "same_climb_every_run": all(c == climbs[0] for c in climbs)}
        print(f"tdd.ini: {climbs[0]} in {statistics.median(walls):.1f} s "
              f"({min(walls):.1f}..{max(walls):.1f}), {rounds[0]} rounds", file=sys.stderr)

        # 3. A fleet of 4 against 1.
        tree = os.path.join(work, "tree")
        os.makedirs(tree)
        with open(os.path.join(tree, "value.txt"), "w") as f:
            f.write("0\n")
        proposer = os.path.join(work, "slow_proposer.sh")
        with open(proposer, "w") as f:
            f.write('#!/bin/sh\n# a proposer that thinks for a second, then proposes one new value on the baseline\n'
                    'sleep 1\n'
                    'printf -- "--- a/value.txt\\n+++ b/value.txt\\n@@ -1 +1 @@\\n-0\\n+%s\\n" "$1$2" > "$3/r$1p$2.patch"\n'
                    'echo \'{"parent": "baseline"}\' > "$3/r$1p$2.json"\n')
        os.chmod(proposer, 0o755)
        rates = {1: [], 4: []}
        problems = []
        for r in range(args.repeats):
            for fleet in (4, 1):  # interleaved: the machine's load falls on both alike
                ini = os.path.join(work, f"fleet{fleet}_{r}.ini")
                with open(ini, "w") as f:
                    f.write(f"""[campaign]
name = fleet
results = {os.path.join(work, f'fleet{fleet}_{r}.h5')}
workdir = {work}
[intent]
objective = value
baseline = x=1
[space]
param = x: int: 1
[propose]
command = sh {proposer} {{round}} {{index}} {{out}}
tree = tree
parallel = {fleet}
max_per_round = {fleet}
budget = {args.proposals}
[explore]
command = sh -c 'echo flotilla-metric: value=$(cat "$0")' {{tree}}/value.txt
repeats = 1
[search]
strategy = grid
budget = 0
[confirm]
enabled = false
[resources]
slots = 2
""")
                start = time.monotonic()
                subprocess.run([flotilla, "run", ini, "--no-live"], cwd=work, env=env, capture_output=True, text=True,
                               check=True)
                elapsed = time.monotonic() - start
                made = json.loads(subprocess.run([flotilla, "results", "proposals", ini.replace(".ini", ".h5"), "--json"],
                                                 env=env, capture_output=True, text=True, check=True).stdout)
                accepted = sum(1 for p in made["proposals"] if p["status"] == "accepted")
                if accepted != args.proposals:
                    problems.append(f"fleet of {fleet}: {accepted} proposals accepted, the budget is {args.proposals}")
                rates[fleet].append(60 * accepted / elapsed)
        out["fleet"] = {"proposals_per_min_1": spread(rates[1]), "proposals_per_min_4": spread(rates[4]),
                        "speedup_4_over_1": statistics.median(rates[4]) / statistics.median(rates[1])}
        print(f"fleet: {statistics.median(rates[1]):.0f} proposals/min with 1 proposer, "
              f"{statistics.median(rates[4]):.0f} with 4", file=sys.stderr)
        # The correctness half: the numbers above mean nothing if the loop did not do its job.
        if climbs[0][-1] != 40:
            problems.append(f"tdd.ini ended at {climbs[0][-1]} passed tests, not all 40")
        if not out["tdd"]["same_climb_every_run"]:
            problems.append(f"tdd.ini climbed differently between runs: {climbs}")
        out["problems"] = problems
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out))
    for problem in out.get("problems", []):
        print(f"bench/propose: {problem}", file=sys.stderr)
    return 1 if out.get("problems") else 0


if __name__ == "__main__":
    sys.exit(main())
