#!/usr/bin/python3
"""run_kernel_tuner.py — Kernel Tuner 1.0's strategies replayed on recorded spaces, for bench/search.

usage: run_kernel_tuner.py SPACES_DIR [--kernel-tuner DIR] [--strategies a,b] [--repeats N]
                           [--budget B] [--seed S] [--spaces a,b] [--work DIR]

DIR is what setup_kernel_tuner.sh made (default $HOME/.cache/flotilla-peers/kernel_tuner-1.0).
Prints one JSON line per <id>.csv space and strategy, in the format bench/search reads with
--peer-lines (that of optuna_tpe.py, with the row's name):
  {"space": id, "strategy": "kt-bayes_opt", "budget": B, "runs": [[best so far after each evaluation, ...], ...],
   "ended_early": n, "errors": [...], "seconds": s}
null while nothing has succeeded. The protocol is Kernel Tuner's own simulation mode
(tune_kernel(..., cache=FILE, simulation_mode=True)), as PEERS.md's figures were made:
  - each space becomes a Kernel Tuner cache file (under --work, default a temporary folder): its
    tune_params are each parameter's values in ascending order, a failed configuration (inf) is
    stored as "RuntimeFailedConfig", as Kernel Tuner records one;
  - the restriction is the recorded rows (a function of the parameters): a configuration outside
    them is InvalidConfig to Kernel Tuner and costs no evaluation;
  - an evaluation is a configuration evaluated for the first time (Kernel Tuner's own count,
    max_fevals = budget); a repeat of one already evaluated is served from the cache and is free;
  - each strategy runs with its default options; a run that ends before the budget (the strategy
    stopped, or raised) keeps its best, and is counted in "ended_early" (errors listed);
  - repeat r of seed S seeds Python's and numpy's generators with S * 1000 + r, and Kernel Tuner's
    Latin hypercube sampler (which otherwise draws its seed from the OS) from numpy's; so a run is
    a function of the seed.
The order of evaluations is taken from Kernel Tuner's simulation runner (every configuration it
looks up, in order); nothing else of Kernel Tuner is changed.
"""
import csv
import gzip
import json
import math
import os
import random
import sys
import tempfile
import time
import warnings

STRATEGIES = ["bayes_opt", "genetic_algorithm", "dual_annealing", "greedy_ils", "mls"]


def load(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    header, body = rows[0], rows[1:]
    objective = header.index("time") if "time" in header else len(header) - 1
    params = [h for i, h in enumerate(header) if i != objective]

    def typed(text):
        text = text.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return float(text)
        except ValueError:
            return text

    table = {}
    for r in body:
        key = tuple(typed(v) for i, v in enumerate(r) if i != objective)
        text = r[objective].strip().lower()
        table[key] = math.inf if text in ("inf", "+inf", "infinity", "nan") else float(text)

    def order(v):
        return (0, v, "") if isinstance(v, (int, float)) else (1, 0, v)

    values = [sorted({k[i] for k in table}, key=order) for i in range(len(params))]
    return params, values, table


def write_cache(path, space_id, params, values, table):
    cache = {}
    for key, t in table.items():
        entry = dict(zip(params, key))
        entry["time"] = t if math.isfinite(t) else "RuntimeFailedConfig"
        entry.update(compile_time=0, verification_time=0, benchmark_time=0)
        cache[",".join(str(v) for v in key)] = entry
    doc = {"device_name": space_id, "kernel_name": space_id, "problem_size": [1], "tune_params_keys": params,
           "tune_params": dict(zip(params, values)), "objective": "time", "cache": cache}
    with open(path, "w") as f:
        f.write(json.dumps(doc, indent=""))  # closed ("}\n}" at the end), as Kernel Tuner expects


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    folder = args[0]

    def option(name, default):
        return args[args.index(name) + 1] if name in args else default

    site = option("--kernel-tuner", os.path.expanduser("~/.cache/flotilla-peers/kernel_tuner-1.0"))
    sys.path.insert(0, site)
    strategies = option("--strategies", ",".join(STRATEGIES)).split(",")
    repeats, budget, seed = int(option("--repeats", 20)), int(option("--budget", 200)), int(option("--seed", 1))
    only = option("--spaces", None)
    only = only.split(",") if only else None
    work = option("--work", None) or tempfile.mkdtemp(prefix="flotilla-kt-")
    os.makedirs(work, exist_ok=True)

    import numpy as np
    import kernel_tuner
    import kernel_tuner.runners.simulation as simulation
    import kernel_tuner.strategies.bayes_opt as bayes_opt
    from scipy.stats import qmc

    warnings.filterwarnings("ignore")
    # Kernel Tuner's Latin hypercube sampler takes no seed (scipy then asks the OS): give it one
    # drawn from numpy's global generator, which each repeat seeds.
    bayes_opt.LatinHypercube = lambda d: qmc.LatinHypercube(d=d, seed=int(np.random.randint(2**31 - 1)))
    # Record every configuration the simulation runner looks up, in order.
    looked_up = []
    original_run = simulation.SimulationRunner.run

    def recording_run(self, parameter_space, tuning_options):
        results = original_run(self, parameter_space, tuning_options)
        for r in results:
            looked_up.append(r)
        return results

    simulation.SimulationRunner.run = recording_run

    for name in sorted(os.listdir(folder)):
        if not name.endswith(".csv") or (only and name[:-4] not in only):
            continue
        space_id = name[:-4]
        params, values, table = load(os.path.join(folder, name))
        cache_file = os.path.join(work, space_id + ".json")
        rows = set(table)

        def recorded(*positional, **named):  # the restriction: called by position or by name
            key = tuple(named[p] for p in params) if named else tuple(positional)
            return key in rows

        for strategy in strategies:
            runs, ended_early, errors = [], 0, []
            started = time.process_time()
            for r in range(repeats):
                s = seed * 1000 + r
                random.seed(s)
                np.random.seed(s)
                write_cache(cache_file, space_id, params, values, table)
                looked_up.clear()
                try:
                    kernel_tuner.tune_kernel(space_id, "", (1,), [], dict(zip(params, values)), restrictions=[recorded],
                                             cache=cache_file, simulation_mode=True, strategy=strategy,
                                             strategy_options={"max_fevals": budget}, quiet=True, verbose=False)
                except Exception as e:  # a run that raises keeps what it evaluated
                    errors.append(f"repeat {r}: {type(e).__name__}: {e}")
                seen, best, trace = set(), math.inf, []
                for res in looked_up:
                    key = tuple(res[p] for p in params)
                    if key in seen:
                        continue
                    seen.add(key)
                    best = min(best, table[key])
                    trace.append(best if math.isfinite(best) else None)
                    if len(trace) >= budget:
                        break
                ended_early += len(trace) < min(budget, len(table))
                runs.append(trace)
            print(json.dumps({"space": space_id, "strategy": "kt-" + strategy, "budget": budget, "runs": runs, "ended_early": ended_early,
                              "errors": errors[:5], "seconds": round(time.process_time() - started, 1)}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
