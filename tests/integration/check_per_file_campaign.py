#!/usr/bin/python3
"""A per-file checker suite in a campaign (evaluate.suite = per_file), end to end.

usage: check_per_file_campaign.py FLOTILLA CHECKER PER_FILE PER_FILE_INI WORK [ARGS...]

With ARGS (e.g. --resources.backend=slurm), only the campaign checks run, with ARGS added to
every `flotilla run`.

Runs configs/per_file.ini (in WORK, over a copy of its corpus) and checks, with h5py and with
the checker run directly:
  - every candidate's per-file outcomes and numbers (errors, tests, skipped) equal a direct run
    of the checker over the same files;
  - no_drop = tests rolls back every mode=quick candidate, naming e.test (10 checks < 14), and
    without no_drop the same variant would have won; resuming adds no trial;
  - faults: a checker killed by a signal, one that times out, one that prints no summary, and
    one whose error count (256) wraps its exit code to 0 are each the right outcome with their
    reason, and a per-file {tmpdir} exists while its file runs and is gone after;
  - an interrupted campaign leaves no checker process (nor what it spawned) and no temporary
    folder behind; so does flotilla-per-file itself on SIGTERM (exit 143); after flotilla is
    killed outright, its next run kills what was left and removes the temporary folders.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tests_table  # noqa: E402  (beside this script)
import time

import h5py

FLOTILLA, CHECKER, PER_FILE, INI, WORK = sys.argv[1:6]
EXTRA = sys.argv[6:]
CORPUS = os.path.join(os.path.dirname(os.path.abspath(INI)), "per_file")
SUMMARY = re.compile(r"(?P<errors>\d+) errors out of (?P<tests>\d+) tests in \S+ - (?P<skipped>\d+) skipped")
# The campaign file says workdir = . (its own folder); here it runs over WORK's copy of the corpus.
WORKDIR = f"--campaign.workdir={WORK}"
TMP = os.path.join(WORK, "tmp")  # TMPDIR of everything flotilla starts: a leaked folder shows here
ENV = dict(os.environ, TMPDIR=TMP,
           PATH=os.path.dirname(CHECKER) + ":" + os.path.dirname(PER_FILE) + ":" + os.environ.get("PATH", ""))


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def run(*args, expect=0):
    if args[0] == "run":
        args = (*args, WORKDIR, *EXTRA)
    p = subprocess.run([FLOTILLA, *args], cwd=WORK, env=ENV, capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        sys.exit(f"flotilla {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def summary(results):
    import json
    return json.loads(run("results", "summary", results, "--json").stdout)


def recorded(results, candidate):
    """{test name: (outcome, {number: value}, message)} of one candidate, read from /tests."""
    with h5py.File(results, "r") as f:
        t = f["tests"]
        row, names, outcomes = tests_table.candidate_run(t, candidate)
        messages = {int(m["test"]): m["text"].decode()
                    for m in t["messages"][int(row["messages_start"]):int(row["messages_start"] + row["messages"])]}
        numbers = {i: {} for i in range(len(names))}
        locators = [r for r in t["number_runs"][...] if r["candidate"] == candidate]
        if locators:
            start, count = int(locators[-1]["numbers_start"]), int(locators[-1]["numbers"])
            for n in t["numbers"][start:start + count]:
                numbers[int(n["test"])][n["name"].decode()] = float(n["value"])
    return {name: (outcomes[i], numbers[i], messages.get(i, "")) for i, name in enumerate(names)}


def direct(files, *options):
    """What the checker says about each file, run directly: {file: (outcome, numbers)}."""
    out = {}
    for name in files:
        p = subprocess.run([CHECKER, *options, name], cwd=WORK, capture_output=True, text=True)
        m = SUMMARY.search(p.stdout)
        numbers = {k: float(v) for k, v in m.groupdict().items()}
        out[name] = ("pass" if numbers["errors"] == 0 else "fail", numbers)
    return out


def without_no_drop():
    """configs/per_file.ini without its no_drop line (an empty value cannot be given on the command line)."""
    path = os.path.join(WORK, "per_file_no_drop_off.ini")
    with open(INI) as f:
        text = f.read()
    check("\nno_drop = tests" in text, "per_file.ini sets no_drop = tests")
    with open(path, "w") as f:
        f.write(text.replace("\nno_drop = tests", "\n"))
    return path


def trial_keys(results):
    with h5py.File(results, "r") as f:
        return sorted((int(r["candidate"]), int(r["kind"]), int(r["index"]), int(r["attempt"])) for r in f["trials"][...])


def no_leftovers(marker, what):
    """No temporary folder under TMPDIR or the tests folder, and no process whose command line holds `marker`."""
    deadline = time.time() + 10
    while True:
        alive = []
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        alive.append(pid)
            except OSError:
                pass
        if not alive or time.time() > deadline:
            break
        time.sleep(0.2)
    check(not alive, f"{what}: processes left behind: {alive}")
    check(os.listdir(TMP) == [], f"{what}: temporary folders left in TMPDIR: {os.listdir(TMP)}")
    stale = glob.glob(os.path.join(WORK, "*.tests", "candidate-*", "*.tmp"))
    check(stale == [], f"{what}: shard temporary folders left: {stale}")


def campaign():
    files = sorted(os.path.relpath(p, WORK) for p in glob.glob(os.path.join(WORK, "per_file/*.test")))
    results = os.path.join(WORK, "per_file.h5")
    run("run", INI, f"--campaign.results={results}", "--no-live")
    s = summary(results)
    check(s["best"]["config"] == "mode=full level=3" and s["best_verified"], f"best: {s['best']}")
    check(s["progress"]["verified"] == 3 and s["progress"]["rolled_back"] == 3, f"progress: {s['progress']}")
    for c in s["rolled_back"]:
        check(c["config"].startswith("mode=quick"), f"rolled back: {c}")
        check(c["reason"] == "test gate: 1 regression against the baseline: per_file/e.test (tests 10 < 14)",
              f"reason: {c['reason']}")
    # Every candidate's outcomes and numbers, file by file, equal a direct run of the checker.
    with h5py.File(results, "r") as f:
        modes = {int(r["id"]): ("quick" if b"mode=quick" in bytes(r["config"]) else "full")
                 for r in f["candidates"][...]}
    for candidate, mode in modes.items():
        got = recorded(results, candidate)
        want = direct(files, "--mode", mode)
        check(sorted(got) == files, f"candidate {candidate}: tests {sorted(got)}")
        for name in files:
            check(got[name][:2] == want[name], f"candidate {candidate} ({mode}) {name}: {got[name]} vs direct {want[name]}")
    # `flotilla results tests` sums the numbers over the files, as the direct run does.
    import json
    totals = json.loads(run("results", "tests", results, "--candidate", "0", "--json").stdout)["numbers"]
    direct_full = direct(files, "--mode", "full")
    check(totals == {k: sum(d[1][k] for d in direct_full.values()) for k in ("errors", "tests", "skipped")},
          f"results tests numbers: {totals}")
    # --per-file: each file's outcome and numbers, as recorded, the baseline's beside them.
    rows = json.loads(run("results", "tests", results, "--candidate", "1", "--per-file", "--json").stdout)["per_test"]
    check(sorted(r["name"] for r in rows) == files, f"--per-file names: {[r['name'] for r in rows]}")
    for r in rows:
        check((r["outcome"], r["numbers"]) == recorded(results, 1)[r["name"]][:2], f"--per-file candidate 1: {r}")
        check((r["reference"]["outcome"], r["reference"]["numbers"]) == recorded(results, 0)[r["name"]][:2],
              f"--per-file baseline: {r}")
    text = run("results", "tests", results, "--candidate", "1", "--per-file").stdout
    check(f"per file ({len(files)} tests; candidate 0 in brackets)" in text, text)
    check(re.search(r"\n  test +outcome +errors +tests +skipped\n", text), text)
    check(re.search(r"\n  per_file/e\.test +\w+ \(pass\) +\d+ \(0\) +\d+ \(14\) +\d+ \(3\)\n", text), text)
    check(recorded(results, 0)["per_file/c.test"][2].startswith("'errors == 0' is false for: 1 errors out of 9"),
          "c.test's message says why")
    # The pandas reader reads the same numbers.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(INI)), "..", "results", "python"))
    import flotilla_results
    frame = flotilla_results.read_campaign(results).test_numbers
    for candidate in modes:
        mine = frame[frame["candidate"] == candidate]
        got = {}
        for row in mine.itertuples():
            got.setdefault(row.test, {})[row.name] = row.value
        check(got == {name: numbers for name, (_, numbers, _) in recorded(results, candidate).items()},
              f"reader: candidate {candidate}: {got}")
    keys = trial_keys(results)
    again = run("run", INI, f"--campaign.results={results}", "--no-live")
    check("resuming" in again.stderr, "the second run resumes")
    check(trial_keys(results) == keys, "resuming a finished campaign adds no trial")
    no_leftovers(os.path.join(WORK, "per_file"), "campaign")
    # Each candidate's division of the files is decided once and kept (assignment.txt: balanced by
    # the reference's recorded per-file durations), and its shards' lists follow it.
    for candidate in modes:
        folder = os.path.join(results + ".tests", f"candidate-{candidate}")
        with open(os.path.join(folder, "files.txt")) as f:
            listed = f.read().split()
        with open(os.path.join(folder, "assignment.txt")) as f:
            shard_of = [int(x) for x in f.read().split()]
        check(len(shard_of) == len(listed) and set(shard_of) <= {0, 1}, f"candidate {candidate}: {shard_of}")
        for shard in (0, 1):
            with open(os.path.join(folder, f"shard-{shard}.files")) as f:
                mine = f.read().split()
            check(mine == [p for p, s in zip(listed, shard_of) if s == shard],
                  f"candidate {candidate}: shard {shard}'s list {mine} does not follow assignment.txt")

    # Without no_drop the variant that runs fewer checks passes every file, and wins.
    results = os.path.join(WORK, "per_file_no_drop_off.h5")
    run("run", without_no_drop(), f"--campaign.results={results}", "--no-live")
    s = summary(results)
    check(s["best"]["config"] == "mode=quick level=3" and s["progress"]["rolled_back"] == 0,
          f"without no_drop: {s['best']} {s['progress']}")


def faults():
    corpus = os.path.join(WORK, "faults")
    os.makedirs(corpus, exist_ok=True)
    cases = {
        "ok.test": "check 1 1\ncheck 2 2\n",
        "crash.test": "check 1 1\ncrash\n",
        "slow.test": "check 1 1\nsleep 30\n",
        "quiet.test": "exit 0\n",
        "wrap.test": "check 1 2\n" * 256,  # 256 errors: exit code 0, and the summary says fail
    }
    for name, text in cases.items():
        with open(os.path.join(corpus, name), "w") as f:
            f.write(text)
    results = os.path.join(WORK, "per_file_faults.h5")
    started = time.time()
    run("run", without_no_drop(), f"--campaign.results={results}", "--evaluate.files=faults/*.test",
        "--evaluate.timeout=2s", "--evaluate.command=flotilla-example-checker --scratch {tmpdir} {file}",
        "--evaluate.require=all_pass", "--search.budget=1", "--no-live", expect=3)
    check(time.time() - started < 60, "the slow file was stopped by its own timeout")
    got = recorded(results, 0)
    check(got["faults/ok.test"][:2] == ("pass", {"errors": 0, "tests": 2, "skipped": 0}), f"ok: {got['faults/ok.test']}")
    check(got["faults/crash.test"][0] == "error" and got["faults/crash.test"][2].startswith(
        "killed by signal 6 (SIGABRT)"), f"crash: {got['faults/crash.test']}")
    check(got["faults/slow.test"][0] == "timeout" and got["faults/slow.test"][2] == "timed out after 2s",
          f"slow: {got['faults/slow.test']}")
    check(got["faults/quiet.test"][0] == "error" and got["faults/quiet.test"][2].startswith(
        "faults/quiet.test: no summary line matches '(?<errors>"), f"quiet: {got['faults/quiet.test']}")
    check(got["faults/wrap.test"][:2] == ("fail", {"errors": 256, "tests": 256, "skipped": 0}),
          f"wrap: {got['faults/wrap.test']}")
    s = summary(results)
    check(s["rolled_back"][0]["reason"].startswith("test gate: 4 of 5 tests failed (1 fail, 2 error, 1 timeout, 0 not run)"),
          s["rolled_back"][0]["reason"])
    no_leftovers(corpus, "faults")


def interrupted():
    corpus = os.path.join(WORK, "slow")
    os.makedirs(corpus, exist_ok=True)
    for i in range(4):
        with open(os.path.join(corpus, f"s{i}.test"), "w") as f:
            f.write("check 1 1\nspawn 120\nsleep 120\n")
    results = os.path.join(WORK, "per_file_interrupted.h5")
    p = subprocess.Popen([FLOTILLA, "run", INI, f"--campaign.results={results}", WORKDIR, "--evaluate.files=slow/*.test",
                          "--evaluate.timeout=300s", "--evaluate.command=flotilla-example-checker --scratch {tmpdir} {file}",
                          "--search.budget=1", "--no-live"], cwd=WORK, env=ENV, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:  # until checkers and what they spawned run
        running = 0
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    running += corpus.encode() in f.read()
            except OSError:
                pass
        if running >= 4 and glob.glob(os.path.join(WORK, "*.tests", "candidate-*", "*.tmp", "*")):
            break
        time.sleep(0.2)
    check(running >= 4, f"interrupt: the checkers did not start ({running})")
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    check("interrupted" in err, f"interrupt: flotilla said {err}")
    no_leftovers(corpus, "interrupt")


def killed_and_resumed():
    """flotilla killed outright (SIGKILL) while its checkers run: its flotilla-per-file dies with
    it and cannot clean up, and what the checkers spawned outlives them. The next run of the
    campaign kills those leftovers and removes the stale temporary folders, then finishes."""
    corpus = os.path.join(WORK, "killed")
    os.makedirs(corpus, exist_ok=True)
    for i in range(2):
        with open(os.path.join(corpus, f"k{i}.test"), "w") as f:
            f.write("check 1 1\nspawn 120\nsleep 120\n")
    results = os.path.join(WORK, "per_file_killed.h5")
    args = [FLOTILLA, "run", INI, f"--campaign.results={results}", WORKDIR, "--evaluate.files=killed/*.test",
            "--evaluate.timeout=3s", "--evaluate.command=flotilla-example-checker --scratch {tmpdir} {file}",
            "--search.budget=1", "--no-live"]
    p = subprocess.Popen(args, cwd=WORK, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stale = os.path.join(WORK, "per_file_killed.h5.tests", "candidate-0", "*.tmp", "*")
    deadline = time.time() + 60
    while time.time() < deadline and len(glob.glob(stale)) < 2:
        time.sleep(0.1)
    check(len(glob.glob(stale)) == 2, "killed: the checkers' {tmpdir} folders exist")
    time.sleep(0.5)  # the checkers have spawned their children
    p.kill()
    p.wait()
    time.sleep(0.5)
    check(glob.glob(stale), "killed: a SIGKILLed flotilla leaves its temporary folders (the case tested here)")
    # A later attempt's folder (a task re-queued before the kill), which the resumed run's attempt-0
    # shards do not reuse: only the sweep at the start of a run removes it.
    os.makedirs(os.path.join(WORK, "per_file_killed.h5.tests", "candidate-0", "shard-1.a7.tmp", "flotilla-per-file.x"))
    again = run("run", INI, f"--campaign.results={results}", "--evaluate.files=killed/*.test",
                "--evaluate.timeout=3s", "--evaluate.command=flotilla-example-checker --scratch {tmpdir} {file}",
                "--search.budget=1", "--no-live")  # the baseline against itself: verified
    check("left running" in again.stderr, f"killed: the resumed run says it killed the leftovers: {again.stderr}")
    no_leftovers(corpus, "killed and resumed")


def helper_signal():
    """flotilla-per-file on its own, stopped by SIGTERM mid-run: it kills its checkers' process
    groups (with what they spawned), removes its temporary folders and exits 128 + 15."""
    corpus = os.path.join(WORK, "slow_helper")
    os.makedirs(corpus, exist_ok=True)
    paths = []
    for i in range(3):
        paths.append(os.path.join(corpus, f"h{i}.test"))
        with open(paths[-1], "w") as f:
            f.write("check 1 1\nspawn 120\nsleep 120\n")
    listing = os.path.join(WORK, "slow_helper.files")
    with open(listing, "w") as f:
        f.write("\n".join(paths) + "\n")
    tmp = os.path.join(WORK, "helper-tmp")
    report = os.path.join(WORK, "slow_helper.json")
    p = subprocess.Popen([PER_FILE, "--files", listing, "--report", report, "--parallel", "3", "--timeout", "300000",
                          "--tmp", tmp, "--summary", SUMMARY.pattern.replace("?P<", "?<"), "--pass-when", "errors == 0",
                          "--", CHECKER, "--scratch", "{tmpdir}", "{file}"], cwd=WORK, env=ENV)
    deadline = time.time() + 30
    while time.time() < deadline and not (os.path.isdir(tmp) and len(os.listdir(tmp)) == 3):
        time.sleep(0.1)
    check(os.path.isdir(tmp) and len(os.listdir(tmp)) == 3, "helper: three {tmpdir} folders while its files run")
    time.sleep(0.5)  # the checkers have spawned their children
    p.send_signal(signal.SIGTERM)
    check(p.wait(timeout=30) == 143, f"helper: exit {p.returncode} on SIGTERM, expected 143")
    check(not os.path.exists(tmp), "helper: its --tmp folder is removed")
    check(not os.path.exists(report), "helper: no report from a stopped run")
    no_leftovers(corpus, "helper")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(TMP)
    shutil.copytree(CORPUS, os.path.join(WORK, "per_file"))
    campaign()
    if EXTRA:
        print("per_file campaign checks passed with " + " ".join(EXTRA))
        return
    faults()
    interrupted()
    killed_and_resumed()
    helper_signal()
    print("per_file campaign checks passed")


if __name__ == "__main__":
    main()
