#!/usr/bin/python3
"""optuna_tpe.py — Optuna's TPE sampler replayed on recorded spaces, for bench/search.

usage: optuna_tpe.py SPACES_DIR [--repeats N] [--budget B] [--seed S] [--spaces a,b] [--univariate]

Prints one JSON line per <id>.csv space: {"space": id, "budget": B, "runs": [[best so far after each
evaluation, ...], ...]}, null while nothing has succeeded. Runs with Debian's /usr/bin/python3
and its python3-optuna (3.1). The protocol is Kernel Tuner's simulation mode, which is the kindest
to a sampler that knows no constraints:
  - every parameter is categorical over the values in its column (the sampler is told nothing
    about order, as with Kernel Tuner's Optuna runs);
  - a proposal outside the recorded (restricted) space costs no evaluation and is told a penalty
    (1e9), so the sampler learns to avoid the restricted region;
  - a proposal already evaluated costs nothing and is told its recorded value again (a campaign
    would look it up rather than run it twice);
  - each new recorded configuration costs one evaluation; a failed one (inf) is told the penalty;
  - at most 10 * budget proposals per repeat, so a sampler stuck on known points ends.
Multivariate TPE (Optuna's recommended setting for dependent parameters, and the one that
PEERS.md reports) unless --univariate.

The correctness half, checked on every run (exit 1 naming the space and the run otherwise): each
counted evaluation is a new recorded configuration (as many entries as configurations seen, at
most the budget), and the best so far never rises and is always a value of the table, no better
than its optimum. Without Optuna it says so and exits 77 (ctest's skip). Full size: search_bench
runs it (bench/search.cpp, --repeats 20 --budget 200); runs in bench/search/RESULTS.md. The ctest
bench_optuna_tpe_replays runs `optuna_tpe.py tests/search/data --repeats 1 --budget 20`.
"""
import csv
import json
import math
import os
import sys
import warnings

try:
    import optuna
except ImportError:
    print("optuna_tpe.py: Optuna is not installed for this Python (Debian: apt-get install python3-optuna); "
          "skipped", file=sys.stderr)
    sys.exit(77)

PENALTY = 1e9


def load(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    header, body = rows[0], rows[1:]
    objective = header.index("time") if "time" in header else len(header) - 1
    params = [h for i, h in enumerate(header) if i != objective]
    table = {}
    for r in body:
        key = tuple(v.strip() for i, v in enumerate(r) if i != objective)
        text = r[objective].strip().lower()
        table[key] = math.inf if text in ("inf", "+inf", "infinity", "nan") else float(text)
    def order(v):
        try:
            return (0, float(v), v)
        except ValueError:
            return (1, 0.0, v)
    values = [sorted({k[i] for k in table}, key=order) for i in range(len(params))]
    return params, values, table


def run(params, values, table, budget, seed, multivariate):
    sampler = optuna.samplers.TPESampler(seed=seed, multivariate=multivariate)
    study = optuna.create_study(sampler=sampler, direction="minimize")
    seen, best, trace = set(), math.inf, []
    for _ in range(10 * budget):
        if len(trace) >= budget:
            break
        trial = study.ask()
        key = tuple(trial.suggest_categorical(p, v) for p, v in zip(params, values))
        if key not in table:
            study.tell(trial, PENALTY)
            continue
        value = table[key]
        if key not in seen:
            seen.add(key)
            best = min(best, value)
            trace.append(best if math.isfinite(best) else None)
        study.tell(trial, value if math.isfinite(value) else PENALTY)
    return trace, len(seen)


def problem(trace, seen, table, budget):
    """Why a run's trace breaks the protocol, or None."""
    values = {v for v in table.values() if math.isfinite(v)}
    if len(trace) != seen or len(trace) > budget:
        return f"{len(trace)} evaluations counted for {seen} configurations seen, budget {budget}"
    known = [v for v in trace if v is not None]
    if any(v not in values for v in known):
        return "a best so far that is no value of the table"
    if any(b > a for a, b in zip(known, known[1:])) or (known and known[0] < min(values)):
        return f"the best so far rises, or beats the optimum {min(values)}: {known}"
    return None


def main():
    args = sys.argv[1:]
    folder = args[0]
    def option(name, default):
        return int(args[args.index(name) + 1]) if name in args else default
    repeats, budget, seed = option("--repeats", 20), option("--budget", 200), option("--seed", 1)
    multivariate = "--univariate" not in args
    only = args[args.index("--spaces") + 1].split(",") if "--spaces" in args else None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".csv") or (only and name[:-4] not in only):
            continue
        params, values, table = load(os.path.join(folder, name))
        runs = []
        for r in range(repeats):
            trace, seen = run(params, values, table, budget, seed * 1000 + r, multivariate)
            wrong = problem(trace, seen, table, budget)
            if wrong:
                sys.exit(f"optuna_tpe.py: {name}, run {r}: {wrong}")
            runs.append(trace)
        print(json.dumps({"space": name[:-4], "budget": budget, "runs": runs}), flush=True)


if __name__ == "__main__":
    main()
