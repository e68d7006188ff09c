#!/usr/bin/python3
"""Per-file checkers at scale: flotilla's per_file protocol against a direct `xargs -P` run.

usage: bench/suites/run.py BUILD_BIN [FILES] [WORK]

Generates FILES (default 5000) small test files of 20 checks each, then checks all of them
three ways with flotilla-example-checker (a tiny C checker), each using every CPU:
  - directly: `xargs -P CPUS -n 1 CHECKER < list` (the baseline);
  - flotilla-per-file alone over the same list (--parallel CPUS);
  - a campaign (evaluate.suite = per_file, one shard, the baseline only), timed by its
    evaluate shard's recorded start and end.
and checks that every file's numbers (the helper's report, the campaign's /tests) agree with the
direct run's. Prints the overhead per file
and the makespan ratios; the last line is one JSON object (target: campaign shard <= 1.1x direct).
Exits 1 when the numbers disagree. Full size: the default 5000 files; runs in bench/suites/RESULTS.md.
The ctest bench_suites_numbers_agree runs 500.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import h5py

BIN = os.path.abspath(sys.argv[1])
FILES = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
WORK = os.path.abspath(sys.argv[3] if len(sys.argv) > 3 else "suites_bench")
CHECKER = os.path.join(BIN, "flotilla-example-checker")
CPUS = len(os.sched_getaffinity(0))
SUMMARY = re.compile(r"(\d+) errors out of (\d+) tests in (\S+) - (\d+) skipped")

INI = """[campaign]
name = suites_bench
seed = 1
[intent]
objective = score
baseline = x=1
[space]
param = x: int: 1,2
[explore]
command = sh -c "echo flotilla-metric: score=$0" {{x}}
repeats = 1
[evaluate]
command = flotilla-example-checker {{file}}
suite = per_file
files = @files.list
summary = (?<errors>\\d+) errors out of (?<tests>\\d+) tests in \\S+ - (?<skipped>\\d+) skipped
pass_when = errors == 0
parallel = {cpus}
timeout = 60s
shards = 1
gate = top 1 per round
[confirm]
enabled = false
[search]
strategy = grid
budget = 1
batch = 1
[resources]
slots = 1
"""


def generate():
    shutil.rmtree(WORK, ignore_errors=True)
    corpus = os.path.join(WORK, "corpus")
    os.makedirs(corpus)
    paths = []
    for i in range(FILES):
        path = os.path.join(corpus, f"t{i:05d}.test")
        with open(path, "w") as f:
            for k in range(20):
                f.write(f"check {k + i % 7} {k + i % 7}\n")
            f.write("skip not here\n")
        paths.append(path)
    with open(os.path.join(WORK, "files.list"), "w") as f:
        f.write("\n".join(paths) + "\n")
    return paths


def numbers_of(text):
    return {m.group(3): (int(m.group(1)), int(m.group(2)), int(m.group(4))) for m in SUMMARY.finditer(text)}


def direct(listing):
    start = time.perf_counter()
    with open(listing) as f:
        p = subprocess.run(["xargs", "-P", str(CPUS), "-n", "1", CHECKER], stdin=f, capture_output=True, text=True)
    return time.perf_counter() - start, numbers_of(p.stdout)


def helper(listing):
    report = os.path.join(WORK, "helper.json")
    start = time.perf_counter()
    subprocess.run([os.path.join(BIN, "flotilla-per-file"), "--files", listing, "--report", report, "--parallel",
                    str(CPUS), "--timeout", "60000", "--summary",
                    r"(?<errors>\d+) errors out of (?<tests>\d+) tests in \S+ - (?<skipped>\d+) skipped",
                    "--pass-when", "errors == 0", "--", CHECKER, "{file}"], cwd=WORK, check=True, capture_output=True)
    seconds = time.perf_counter() - start
    with open(report) as f:
        tests = json.load(f)["per_file"]
    return seconds, {t["name"]: tuple(int(t["numbers"][k]) for k in ("errors", "tests", "skipped")) for t in tests}


def campaign():
    ini = os.path.join(WORK, "suites_bench.ini")
    with open(ini, "w") as f:
        f.write(INI.format(cpus=CPUS))
    env = dict(os.environ, PATH=BIN + ":" + os.environ["PATH"])
    subprocess.run([os.path.join(BIN, "flotilla"), "run", ini, "--no-live"], cwd=WORK, env=env, check=True,
                   capture_output=True)
    results = os.path.join(WORK, "suites_bench.h5")
    with h5py.File(results, "r") as f:
        shard = next(t for t in f["trials"][...] if t["candidate"] == 0 and t["kind"] == 1 and t["index"] == 0)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "python"))
    import flotilla_results
    frame = flotilla_results.read_campaign(results).test_numbers
    numbers = {}
    for row in frame[frame["candidate"] == 0].itertuples():
        numbers.setdefault(row.test, {})[row.name] = int(row.value)
    return float(shard["end"] - shard["start"]), {k: (v["errors"], v["tests"], v["skipped"]) for k, v in numbers.items()}


def main():
    paths = generate()
    listing = os.path.join(WORK, "files.list")
    direct(listing)  # warm the page cache and the checker's binary
    direct_s, direct_numbers = direct(listing)
    helper_s, helper_numbers = helper(listing)
    shard_s, campaign_numbers = campaign()
    # The helper names each file by its path relative to its working directory (WORK).
    relative = {os.path.relpath(p, WORK): p for p in paths}
    agree = (len(direct_numbers) == FILES and set(relative) == set(helper_numbers) == set(campaign_numbers) and
             all(helper_numbers[name] == campaign_numbers[name] == direct_numbers[path]
                 for name, path in relative.items()))
    result = {
        "bench": "suites",
        "files": FILES,
        "cpus": CPUS,
        "direct_xargs_s": direct_s,
        "per_file_helper_s": helper_s,
        "campaign_shard_s": shard_s,
        "helper_overhead_per_file_ms": 1e3 * (helper_s - direct_s) / FILES,
        "campaign_overhead_per_file_ms": 1e3 * (shard_s - direct_s) / FILES,
        "helper_ratio": helper_s / direct_s,
        "campaign_ratio": shard_s / direct_s,
        "numbers_agree": agree,
        "load_average": os.getloadavg()[0],
    }
    result["targets_met"] = agree and result["campaign_ratio"] <= 1.1
    print(f"{FILES} files on {CPUS} CPUs: xargs -P {direct_s:.2f} s, flotilla-per-file {helper_s:.2f} s "
          f"({result['helper_ratio']:.2f}x), campaign shard {shard_s:.2f} s ({result['campaign_ratio']:.2f}x); "
          f"numbers agree: {agree}")
    print(json.dumps(result, sort_keys=True))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
