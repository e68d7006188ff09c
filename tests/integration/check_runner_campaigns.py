#!/usr/bin/python3
"""configs/lit.ini and configs/pytest.ini end to end (evaluate.suite = lit | pytest).

usage: check_runner_campaigns.py FLOTILLA KIND INI WORK

KIND is lit or pytest. Copies the config's suite (configs/KIND/) into WORK/ and runs the
campaign there (--campaign.workdir=WORK) on the local backend, then checks with h5py and with the runner run directly:
  - variant b's candidates are rolled back naming the tests the bad candidate breaks, and the best
    variant-a candidate is verified;
  - every candidate's recorded test names and outcomes (/tests) equal one direct, unsharded run
    of the runner over the whole suite (lit: its JSON report's codes; pytest: a plugin's record
    of each node id's outcome), mapped as docs/tests.md says;
  - each candidate ran shards 0 and 1, and the shards' lists of tests split the suite: every
    test in exactly one; variant b's failures were re-run once, alone;
  - resuming the finished campaign adds no trial;
  - a path that does not exist is a config error naming [evaluate] paths;
  - a discovery that fails (a lit config that raises, a pytest file that does not compile) rolls
    the candidate back, saying why;
  - a campaign stopped by SIGTERM while its shards run a slow test leaves no runner process, and
    no test's process, behind.
"""
import glob
import signal
import time
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tests_table  # noqa: E402  (beside this script)

import h5py

FLOTILLA, KIND, INI, WORK = sys.argv[1:5]
LIT = "/usr/lib/llvm-15/build/utils/lit/lit.py"
LIT_CODES = {"PASS": "pass", "FLAKYPASS": "pass", "XFAIL": "pass", "FAIL": "fail", "XPASS": "fail",
             "UNRESOLVED": "error", "TIMEOUT": "timeout", "UNSUPPORTED": "skip"}
BROKEN = {"lit": ["flotilla-lit :: basic/sum.txt"],
          "pytest": ["pytest/test_emit.py::test_add[2-2]", "pytest/test_emit.py::test_add[1-0]"]}
PYTEST_PLUGIN = '''
import json, os
outcomes = {}
def pytest_runtest_logreport(report):
    if report.when != "call" and report.passed:
        return
    if hasattr(report, "wasxfail"):
        outcome = "pass" if report.skipped else "fail"
    elif report.skipped:
        outcome = "skip"
    elif report.failed:
        outcome = "fail" if report.when == "call" else "error"
    else:
        outcome = "pass"
    outcomes.setdefault(report.nodeid, outcome)
def pytest_sessionfinish(session):
    with open(os.environ["OUTCOMES_JSON"], "w") as f:
        json.dump(outcomes, f)
'''


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def run(*args, expect=0, cwd=None):
    # The campaign file says workdir = . (its own folder); here it runs over the copy in cwd.
    if args[0] == "run" and not any(a.startswith("--campaign.workdir=") for a in args):
        args = (*args, "--campaign.workdir=" + (cwd or WORK))
    p = subprocess.run([FLOTILLA, *args], cwd=cwd or WORK, capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        sys.exit(f"flotilla {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def recorded(results, candidate):
    """{test name: outcome} of one candidate, read from /tests."""
    with h5py.File(results, "r") as f:
        t = f["tests"]
        row, names, outcomes = tests_table.candidate_run(t, candidate)
    return dict(zip(names, outcomes))


def direct(variant):
    """One unsharded run of the runner over the whole suite: {test name: outcome}."""
    out = os.path.join(WORK, f"direct-{variant}.json")
    if KIND == "lit":
        subprocess.run(["python3", LIT, "-q", f"--param=variant={variant}", "-o", out, "lit"], cwd=WORK,
                       capture_output=True)
        with open(out) as f:
            return {t["name"]: LIT_CODES[t["code"]] for t in json.load(f)["tests"]}
    with open(os.path.join(WORK, "outcomes_plugin.py"), "w") as f:
        f.write(PYTEST_PLUGIN)
    env = dict(os.environ, FLOTILLA_VARIANT=variant, PYTHONDONTWRITEBYTECODE="1", OUTCOMES_JSON=out,
               PYTHONPATH=WORK)
    subprocess.run(["pytest-3", "-p", "no:cacheprovider", "-p", "outcomes_plugin", "--rootdir=.", "pytest"],
                   cwd=WORK, env=env, capture_output=True)
    with open(out) as f:
        return json.load(f)


def processes(marker):
    """Processes whose command line holds `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def interrupted():
    """SIGTERM to flotilla while each shard runs a test that sleeps: nothing is left running."""
    work = os.path.join(WORK, "interrupted")
    shutil.rmtree(work, ignore_errors=True)
    suite = os.path.join(work, KIND)
    shutil.copytree(os.path.join(WORK, KIND), suite, ignore=shutil.ignore_patterns("Output", "__pycache__"))
    marker = "3141"  # sleep 314.1: no other process here has it in its command line
    if KIND == "lit":
        for name in ("slow_a.txt", "slow_b.txt"):
            with open(os.path.join(suite, name), "w") as f:
                f.write(f"RUN: sleep {marker[:3]}.{marker[3:]}\n")
    else:
        with open(os.path.join(suite, "test_slow.py"), "w") as f:
            f.write("import subprocess\n\n\ndef test_slow_a():\n    subprocess.run(['sleep', '314.1'])\n\n\n"
                    "def test_slow_b():\n    subprocess.run(['sleep', '314.1'])\n")
    p = subprocess.Popen([FLOTILLA, "run", INI, f"--campaign.results={os.path.join(work, 'stopped.h5')}",
                          "--search.budget=1", "--evaluate.timeout=600s", "--no-live", "--campaign.workdir=" + work],
                         cwd=work,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(processes("314.1")) < 2:
        time.sleep(0.2)
    check(len(processes("314.1")) >= 2, f"interrupt: the slow tests did not start ({processes('314.1')})")
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    check("interrupted" in err, f"interrupt: flotilla said {err}")
    deadline = time.time() + 10
    while time.time() < deadline and (processes("314.1") or processes(os.path.join(work, "stopped.h5.tests"))):
        time.sleep(0.2)
    check(not processes("314.1"), f"interrupt: test processes left behind: {processes('314.1')}")
    check(not processes(os.path.join(work, "stopped.h5.tests")), "interrupt: runner processes left behind")


def broken_discovery():
    """A suite the runner cannot list: the candidate is rolled back with the runner's reason."""
    work = os.path.join(WORK, "broken")
    shutil.rmtree(work, ignore_errors=True)
    suite = os.path.join(work, KIND)
    shutil.copytree(os.path.join(WORK, KIND), suite, ignore=shutil.ignore_patterns("Output", "__pycache__"))
    if KIND == "lit":
        with open(os.path.join(suite, "lit.cfg.py"), "a") as f:
            f.write("raise RuntimeError('this suite cannot be listed')\n")
        why = "fatal: unable to parse con"  # lit says so on stderr (the reason keeps its start)
    else:
        with open(os.path.join(suite, "test_broken.py"), "w") as f:
            f.write("def test_broken(:\n")
        why = ": ERROR pytest/test_broken.py (output: "
    results = os.path.join(work, "broken.h5")
    # Started elsewhere, with the suite's folder as campaign.workdir: discovery runs there too.
    run("run", INI, f"--campaign.results={results}", "--search.budget=0", "--no-live", "--campaign.workdir=" + work,
        expect=3)  # the baseline failed verification: the campaign stops
    s = json.loads(run("results", "summary", results, "--json").stdout)
    reasons = [c["reason"] for c in s["rolled_back"]]
    check(len(reasons) == 1 and "test discovery" in reasons[0] and "ended with exit code" in reasons[0] and
          why in reasons[0], f"broken discovery: {reasons}")


def main():
    suite = os.path.join(WORK, KIND)
    shutil.rmtree(suite, ignore_errors=True)
    shutil.copytree(os.path.join(os.path.dirname(os.path.abspath(INI)), KIND), suite,
                    ignore=shutil.ignore_patterns("Output", "__pycache__"))
    results = os.path.join(WORK, f"{KIND}.h5")
    for old in glob.glob(results + "*"):
        shutil.rmtree(old) if os.path.isdir(old) else os.remove(old)
    run("run", INI, f"--campaign.results={results}", "--no-live")
    s = json.loads(run("results", "summary", results, "--json").stdout)
    check(s["best"]["config"] == "variant=a level=3" and s["best_verified"], f"best: {s['best']}")
    check(s["progress"]["rolled_back"] == 3, f"progress: {s['progress']}")
    for c in s["rolled_back"]:
        check(c["config"].startswith("variant=b"), f"rolled back: {c}")
        broken = BROKEN[KIND]
        want = (f"test gate: {len(broken)} regression{'s' if len(broken) > 1 else ''} against the baseline: " +
                ", ".join(f"{name} (fail)" for name in broken))
        check(c["reason"] == want, f"reason: {c['reason']!r}, expected {want!r}")

    with h5py.File(results, "r") as f:
        variants = {int(r["id"]): ("b" if b"variant=b" in bytes(r["config"]) else "a") for r in f["candidates"][...]}
        trials = sorted((int(r["candidate"]), int(r["kind"]), int(r["index"]), int(r["attempt"])) for r in f["trials"][...])
    want_by_variant = {v: direct(v) for v in ("a", "b")}
    check(len(want_by_variant["a"]) == 5 if KIND == "lit" else len(want_by_variant["a"]) == 7,
          f"direct run: {want_by_variant['a']}")
    check(set(want_by_variant["a"].values()) >= {"pass", "skip"}, f"direct run has passes and a skip: {want_by_variant['a']}")
    tests_dir = results + ".tests"
    for candidate, variant in variants.items():
        got = recorded(results, candidate)
        check(got == want_by_variant[variant],
              f"candidate {candidate} (variant {variant}): recorded {got}\n  direct {want_by_variant[variant]}")
        # The shards' lists split the suite: every test in exactly one.
        lists = sorted(glob.glob(os.path.join(tests_dir, f"candidate-{candidate}", "shard-*.args")))
        check(len(lists) == 2, f"candidate {candidate}: shard lists {lists}")
        given = []
        for path in lists:
            with open(path) as f:
                given += [line for line in f.read().splitlines() if line]
        check(len(given) == len(set(given)) == len(got), f"candidate {candidate}: shards were given {given}")
    evaluated = {c for (c, kind, index, _) in trials if index == 0 and kind == 1}
    for candidate in variants:
        indices = {index for (c, kind, index, _) in trials if c == candidate and kind == 1}
        check({0, 1, 2} <= indices, f"candidate {candidate}: evaluate trials {sorted(indices)}")
        # The failures are re-run once (trial 3), by their paths or node ids: variant b's only.
        check((3 in indices) == (variants[candidate] == "b"), f"candidate {candidate}: re-run {sorted(indices)}")
        if variants[candidate] == "b":
            with open(os.path.join(tests_dir, f"candidate-{candidate}", "rerun.args")) as f:
                rerun = f.read().splitlines()
            check(len(rerun) == len(BROKEN[KIND]), f"candidate {candidate}: re-run {rerun}")
    check(evaluated, "some candidate was evaluated")

    again = run("run", INI, f"--campaign.results={results}", "--no-live")
    check("resuming" in again.stderr, "the second run resumes")
    with h5py.File(results, "r") as f:
        after = sorted((int(r["candidate"]), int(r["kind"]), int(r["index"]), int(r["attempt"])) for r in f["trials"][...])
    check(after == trials, "resuming a finished campaign adds no trial")

    p = run("run", INI, f"--campaign.results={os.path.join(WORK, 'bad.h5')}", "--evaluate.paths=configs/nowhere",
            "--no-live", expect=1)
    check("[evaluate] paths: 'configs/nowhere' does not exist" in p.stderr, f"bad path: {p.stderr}")
    broken_discovery()
    interrupted()
    print(f"{KIND}: {len(variants)} candidates, recorded outcomes equal a direct run, "
          f"{s['progress']['rolled_back']} rolled back")


main()
