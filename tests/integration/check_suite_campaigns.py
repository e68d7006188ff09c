#!/usr/bin/python3
"""Campaigns whose evaluate stage runs real test suites (evaluate.suite), end to end.

usage: check_suite_campaigns.py FLOTILLA SAMPLE_SUITE CORPUS_CHECK COMPAT_INI FILES_INI WORK [ARGS...]

With ARGS (e.g. --resources.backend=slurm), only the compat.ini checks run, with ARGS added to
every `flotilla run`.

Runs `flotilla run` and checks the results through the CLI and, independently, with h5py and
with the suite binary run directly:
  - compat.ini (gtest, 3 shards, no_regression): variant b is rolled back by the gate naming its
    one regression, the best variant-a candidate wins; the sharded outcomes equal one unsharded
    run of the same binary; the baseline's failure was re-run once; resuming adds nothing.
  - the same with require = all_pass: the baseline's known failure rolls everything back.
  - a flaky test (fails on its first run only) is recorded as flaky and counts as a pass.
  - a file suite (corpus_check over generated .test files, TAP reports, 2 shards).
  - a ctest suite (a generated CTestTestfile.cmake): shards by test number, a skip, the re-run.
  - gates that cannot be fooled: a file checker that silently skips one of its files is rolled
    back under all_pass, naming the file; a variant that drops one passing test and fixes
    another is a regression under no_regression (suite_gates.ini, with a listing and without).
  - the verdict words: every campaign here confirms its winner against the baseline.
"""
import json
import os
import shutil
import subprocess
import sys

import h5py

FLOTILLA, SAMPLES, CORPUS_CHECK, COMPAT, FILES_INI, WORK = sys.argv[1:7]
HERE = os.path.dirname(os.path.abspath(__file__))
GATES_INI = os.path.join(HERE, "suite_gates.ini")
EXTRA = sys.argv[7:]
PREFIX = "slurm_" if EXTRA else ""
ENV = dict(os.environ, PATH=os.path.dirname(SAMPLES) + ":" + HERE + ":" + os.environ.get("PATH", ""))


def run(*args, expect=0, cwd=WORK):
    if args[0] == "run":
        args = (*args, *EXTRA)
    p = subprocess.run([FLOTILLA, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)
    if expect is not None and p.returncode != expect:
        sys.exit(f"flotilla {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def summary(results):
    return json.loads(run("results", "summary", results, "--json").stdout)


def tests(results, candidate, vs=None):
    args = ["results", "tests", results, "--candidate", str(candidate), "--json"]
    if vs is not None:
        args += ["--vs", str(vs)]
    return json.loads(run(*args).stdout)


def trial_keys(results):
    with h5py.File(results, "r") as f:
        t = f["trials"][...]
        keys = [(int(r["candidate"]), int(r["kind"]), int(r["index"]), int(r["attempt"])) for r in t]
    assert len(keys) == len(set(keys)), f"{results}: a trial is recorded twice"
    return keys


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def direct_counts(variant):
    """Outcome counts of one unsharded run of the suite binary, from its own JSON report."""
    report = os.path.join(WORK, f"direct-{variant}.json")
    subprocess.run([SAMPLES, f"--gtest_output=json:{report}"], env=dict(ENV, FLOTILLA_SAMPLE_VARIANT=variant),
                   capture_output=True)
    counts = {"pass": 0, "fail": 0, "skip": 0}
    with open(report) as f:
        for suite in json.load(f)["testsuites"]:
            for t in suite["testsuite"]:
                if t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                    counts["skip"] += 1
                elif t.get("failures"):
                    counts["fail"] += 1
                else:
                    counts["pass"] += 1
    return counts


def compat():
    results = os.path.join(WORK, PREFIX + "compat.h5")
    run("run", COMPAT, f"--campaign.results={results}", "--no-live")
    s = summary(results)
    check(s["campaign"]["test_gate"] == "no_regression", "test_gate attribute")
    check(s["best"]["config"] == "variant=a level=4" and s["best_verified"], f"best: {s['best']}")
    # The stand-in benchmark is exact (score = level): level 4 is 4x the baseline, confirmed at
    # the first look.
    check(s["verdict"] == "confirmed faster" and s["best_confirmed"], f"verdict: {s['verdict']}")
    check(s["best"]["confirmation"]["verdict"] == "faster" and abs(s["gain_over_baseline"] - 4) < 1e-9,
          f"confirmation: {s['best']['confirmation']}")
    check(s["progress"]["verified"] == 4 and s["progress"]["rolled_back"] == 4, f"progress: {s['progress']}")
    for c in s["rolled_back"]:
        check(c["config"].startswith("variant=b"), f"rolled back: {c}")
        check(c["reason"] == "test gate: 1 regression against the baseline: Outcomes.PassesUnlessVariantB (fail)",
              f"reason: {c['reason']}")
    b = next(c["id"] for c in s["rolled_back"])
    t = tests(results, b, "baseline")
    check(t["regressions"]["names"] == ["Outcomes.PassesUnlessVariantB"], f"regressions: {t['regressions']}")
    check(t["fixes"]["names"] == ["Outcomes.FailsUnlessVariantB"], f"fixes: {t['fixes']}")
    # Sharded through flotilla == one direct run of the same binary.
    for candidate, variant in ((0, "a"), (b, "b")):
        got = tests(results, candidate)["summary"]
        want = direct_counts(variant)
        check((got["pass"], got["fail"] + got["error"], got["skip"]) == (want["pass"], want["fail"], want["skip"]),
              f"candidate {candidate}: {got} vs direct {want}")
        check(got["rerun"] == 1, f"candidate {candidate}: its one failure is re-run once: {got}")
    keys = trial_keys(results)
    for c in range(8):
        indices = {k[2] for k in keys if k[0] == c and k[1] == 1}
        check({0, 1, 2, 3} <= indices, f"candidate {c}: shards 0-2 and the verdict (3): {indices}")
        check(4 in indices, f"candidate {c}: the re-run of its failure (index 4): {indices}")
    with h5py.File(results, "r") as f:
        check(f["tests"]["runs"].shape[0] == 8, "8 candidates' outcomes in /tests")
    # The pandas reader requires the verdict too, so it agrees with the CLI on every status.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(COMPAT)), "..", "results", "python"))
    import flotilla_results
    reader = flotilla_results.Campaign(results)
    statuses = {int(i): st for i, st in reader.candidates["status"].items()}
    cli = {c["id"]: "rolled_back" for c in s["rolled_back"]} | {c["id"]: c["status"] for c in s["top"]}
    check(statuses == cli, f"reader {statuses} vs CLI {cli}")
    check(len(reader.tests) == 8 * 37, f"reader: {len(reader.tests)} test rows")
    if shutil.which("gnuplot"):
        svg = os.path.join(WORK, PREFIX + "compat-tests.svg")
        run("results", "plot", results, "--kind", "tests", "-o", svg)
        with open(svg) as f:
            plot = f.read()
        check("tests per candidate (8 candidates evaluated)" in plot, "the tests plot has a bar per candidate")
        check("against the baseline (candidate 0): 4 regressions, 4 fixes in all" in plot,
              "the tests plot counts the rolled-back candidates' regressions and fixes against the baseline")
    again = run("run", COMPAT, f"--campaign.results={results}", "--no-live")
    check("resuming" in again.stderr, "second run resumes")
    check(trial_keys(results) == keys, "resuming a finished campaign adds no trial")

    # all_pass: the baseline's known failure fails the gate, so nothing is verified.
    results = os.path.join(WORK, PREFIX + "compat_all_pass.h5")
    run("run", COMPAT, f"--campaign.results={results}", "--evaluate.require=all_pass", "--search.budget=2",
        "--no-live", expect=3)
    s = summary(results)
    check(s["progress"]["verified"] == 0, f"all_pass verifies nothing: {s['progress']}")
    reasons = {c["reason"] for c in s["rolled_back"]}
    check(any(r.startswith("test gate: 1 of 37 tests failed") for r in reasons), f"reasons: {reasons}")


def flaky():
    results = os.path.join(WORK, "compat_flaky.h5")
    markers = os.path.join(WORK, "flaky-markers")
    os.makedirs(markers, exist_ok=True)
    for name in os.listdir(markers):
        os.remove(os.path.join(markers, name))
    command = f"env FLOTILLA_SAMPLE_VARIANT={{variant}} FLOTILLA_FLAKY_MARKER={markers}/{{candidate}} flotilla-sample-suite"
    run("run", COMPAT, f"--campaign.results={results}", f"--evaluate.command={command}", "--search.budget=1",
        "--no-live")
    t = tests(results, 0)
    check(t["summary"]["flaky"] == 1 and t["flaky"] == ["Outcomes.FlakyOnFirstRun"], f"flaky: {t['flaky']}")
    check(summary(results)["baseline"]["status"] == "verified", "a flaky test counts as a pass")


def files():
    corpus = os.path.join(WORK, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for i in range(3):
        with open(os.path.join(corpus, f"part{i}.test"), "w") as f:
            f.write(f"add{i}: {i} + 1 = {i + 1}\nmul{i}: {i} * 2 = {2 * i}\nskip{i}: skip\n")
            if i == 1:
                f.write("wrong: 2 + 2 = 5\n")
    results = os.path.join(WORK, "suite_files.h5")
    run("run", FILES_INI, f"--campaign.results={results}", f"--evaluate.command={CORPUS_CHECK} {{files}} {{report}}",
        "--no-live", expect=3)
    s = summary(results)
    check(s["progress"]["rolled_back"] == 3, f"files: {s['progress']}")
    t = tests(results, 0)["summary"]
    check((t["total"], t["pass"], t["fail"], t["skip"]) == (10, 6, 1, 3), f"files: {t}")
    check(s["rolled_back"][0]["reason"].startswith("test gate: 1 of 10 tests failed"), s["rolled_back"][0]["reason"])
    check(s["rolled_back"][0]["reason"].endswith(":wrong (fail)"), s["rolled_back"][0]["reason"])

    # A checker that silently leaves out one of the files it was given (x = 2 drops part1):
    # every case it does report passes, yet the file it skipped is not run, and all_pass fails.
    good = os.path.join(WORK, "corpus_ok")
    os.makedirs(good, exist_ok=True)
    for i in range(3):
        with open(os.path.join(good, f"part{i}.test"), "w") as f:
            f.write(f"add{i}: {i} + 1 = {i + 1}\n")
    skipping = ("sh -c 'if [ \"$2\" = 2 ]; then grep -v part1 \"$0\" > \"$0.kept\"; else cp \"$0\" \"$0.kept\"; fi; "
                f"exec {CORPUS_CHECK} \"$0.kept\" \"$1\"' {{files}} {{report}} {{x}}")
    results = os.path.join(WORK, "suite_files_skip.h5")
    run("run", FILES_INI, f"--campaign.results={results}", f"--evaluate.command={skipping}",
        "--evaluate.files=corpus_ok/*.test", "--evaluate.shards=1", "--no-live")
    s = summary(results)
    check(s["progress"]["verified"] == 2 and s["progress"]["rolled_back"] == 1, f"skip a file: {s['progress']}")
    reason = s["rolled_back"][0]["reason"]
    check(s["rolled_back"][0]["config"] == "x=2", f"skip a file: {s['rolled_back']}")
    check(reason == "test gate: 1 of 3 tests failed (0 fail, 0 error, 0 timeout, 1 not run): corpus_ok/part1.test "
                    "(not_run)", f"skip a file: {reason}")

    # A checker whose report names the files by basename (corpus_ok/part0.test given, part0.test
    # reported) names none of them: each file is not run, and the gate says that the reported
    # names matched no file given, rather than listing the files as if they had been skipped.
    basenames = (f"sh -c '{CORPUS_CHECK} \"$0\" \"$1.full\"; rc=$?; sed \"s#- .*/#- #\" \"$1.full\" > \"$1\"; "
                 "exit $rc' {files} {report}")
    results = os.path.join(WORK, "suite_files_basenames.h5")
    run("run", FILES_INI, f"--campaign.results={results}", f"--evaluate.command={basenames}",
        "--evaluate.files=corpus_ok/*.test", "--evaluate.shards=1", "--search.budget=1", "--no-live", expect=None)
    reason = summary(results)["rolled_back"][0]["reason"]
    want = ("test gate: 3 of 6 tests failed (0 fail, 0 error, 0 timeout, 3 not run); 3 reported names matched no file given: "
            "part0.test:add0, part1.test:add1, part2.test:add2 (a report must name each file as it was given, "
            "or by its absolute path)")
    check(reason == want, f"basenames: {reason}")
    t = tests(results, 0)
    check((t["summary"]["total"], t["summary"]["not_run"]) == (6, 3), f"basenames: {t['summary']}")
    rows = json.loads(run("results", "tests", results, "--candidate", "0", "--per-file", "--json").stdout)["per_test"]
    check(sorted((r["name"], r["outcome"]) for r in rows)
          == [(f"corpus_ok/part{i}.test", "not_run") for i in range(3)] + [(f"part{i}.test:add{i}", "pass") for i in range(3)],
          f"basenames: {rows}")

    # Several patterns, a recursive ** and a @LIST file, one test per file, each file once
    # (corpus_deep/x/y/part3.test is matched by ** and named in the list too).
    deep = os.path.join(WORK, "corpus_deep", "x", "y")
    os.makedirs(deep, exist_ok=True)
    with open(os.path.join(deep, "part3.test"), "w") as f:
        f.write("add3: 3 + 1 = 4\n")
    with open(os.path.join(WORK, "corpus_deep", "top.test"), "w") as f:
        f.write("add4: 4 + 1 = 5\n")
    with open(os.path.join(WORK, "more.list"), "w") as f:
        f.write("# the deep one again, and one of corpus_ok\ncorpus_deep/x/y/part3.test\ncorpus_ok/part0.test\n")
    results = os.path.join(WORK, "suite_files_patterns.h5")
    run("run", FILES_INI, f"--campaign.results={results}", f"--evaluate.command={CORPUS_CHECK} {{files}} {{report}}",
        "--evaluate.files=corpus_deep/**/*.test corpus_ok/part2.test @more.list", "--evaluate.shards=2",
        "--search.budget=1", "--no-live")
    t = tests(results, 0)
    check(t["summary"]["total"] == 4 and t["summary"]["pass"] == 4, f"patterns: {t['summary']}")
    bad = run("run", FILES_INI, f"--campaign.results={results}.bad.h5", "--evaluate.files=corpus_deep/**/*.nothing",
              "--no-live", expect=1)
    check("[evaluate] files: 'corpus_deep/**/*.nothing' matches no file" in bad.stderr, bad.stderr)
    alone = run("run", FILES_INI, f"--campaign.results={results}.alone.h5", "--search.budget=0", "--no-live", expect=1)
    check("[search] budget: '0' verifies the baseline alone, but [intent] baseline is not set" in alone.stderr,
          alone.stderr)


def gates():
    """A variant that fixes the baseline's failure and drops a passing test is a regression."""
    for listed in (True, False):
        results = os.path.join(WORK, f"suite_gates_{'listed' if listed else 'unlisted'}.h5")
        args = [] if listed else ["--evaluate.list=none"]
        run("run", GATES_INI, f"--campaign.results={results}", *args, "--no-live")
        s = summary(results)
        rolled = {c["config"]: c["reason"] for c in s["rolled_back"]}
        dropped = "t3 (not_run)" if listed else "t3 (not run: absent)"
        check(rolled == {"x=2": f"test gate: 1 regression against the baseline: {dropped}"}, f"gates: {rolled}")
        check(s["best"]["config"] == "x=3" and s["verdict"] == "confirmed faster", f"gates: best {s['best']}")


def ctest():
    tree = os.path.join(WORK, "ctest-tree")
    os.makedirs(tree, exist_ok=True)
    with open(os.path.join(tree, "CTestTestfile.cmake"), "w") as f:
        f.write('add_test(pass1 "true")\nadd_test(pass2 "true")\nadd_test(pass3 "true")\n'
                'add_test(known_failure "sh" "-c" "test \\"$FLOTILLA_SAMPLE_VARIANT\\" = b")\n'
                'add_test(breaks_in_b "sh" "-c" "test \\"$FLOTILLA_SAMPLE_VARIANT\\" != b")\n'
                'add_test(skipper "sh" "-c" "exit 77")\nset_tests_properties(skipper PROPERTIES SKIP_RETURN_CODE 77)\n')
    results = os.path.join(WORK, "compat_ctest.h5")
    run("run", COMPAT, f"--campaign.results={results}", "--evaluate.suite=ctest",
        f"--evaluate.command=env FLOTILLA_SAMPLE_VARIANT={{variant}} ctest --test-dir {tree}", "--no-live")
    s = summary(results)
    check(s["best"]["config"] == "variant=a level=4" and s["best_verified"], f"ctest best: {s['best']}")
    check(s["progress"]["rolled_back"] == 4, f"ctest progress: {s['progress']}")
    b = next(c["id"] for c in s["rolled_back"])
    t = tests(results, b, "baseline")
    check(t["regressions"]["names"] == ["breaks_in_b"] and t["fixes"]["names"] == ["known_failure"], f"ctest: {t}")
    got = tests(results, 0)["summary"]
    check((got["total"], got["pass"], got["fail"], got["skip"], got["rerun"]) == (6, 4, 1, 1, 1), f"ctest: {got}")
    # Every test in exactly one shard's -I selection (balanced by the baseline's durations for
    # the other candidates, by count for the baseline), as assignment.txt says.
    for c in range(8):
        folder = os.path.join(results + ".tests", f"candidate-{c}")
        selected = []
        for k in range(3):
            with open(os.path.join(folder, f"shard-{k}.ctest")) as f:
                numbers = [int(n) for n in f.read().strip().split(",")[3:]]
            selected += numbers
            with open(os.path.join(folder, "assignment.txt")) as f:
                check([i + 1 for i, a in enumerate(f.read().split()) if int(a) == k] == numbers, f"{folder}: shard {k}")
        check(sorted(selected) == [1, 2, 3, 4, 5, 6], f"{folder}: {selected}")

    # More shards than tests: the empty shards report an empty suite (ctest -I with no numbers
    # would run every test, and each would be reported twice).
    many = os.path.join(WORK, "compat_ctest_many.h5")
    run("run", COMPAT, f"--campaign.results={many}", "--evaluate.suite=ctest", "--evaluate.shards=8",
        f"--evaluate.command=env FLOTILLA_SAMPLE_VARIANT={{variant}} ctest --test-dir {tree}", "--search.budget=2",
        "--no-live")
    got = tests(many, 0)["summary"]
    check((got["total"], got["pass"], got["fail"]) == (6, 4, 1), f"ctest, 8 shards: {got}")

    # A candidate whose discovery fails is rolled back with the listing's error as the reason
    # (its shards run no test: their task is `false`, no shell).
    for v in "abc":
        os.makedirs(f"{tree}-{v}", exist_ok=True)
        shutil.copy(os.path.join(tree, "CTestTestfile.cmake"), f"{tree}-{v}")
    with open(os.path.join(f"{tree}-b", "CTestTestfile.cmake"), "w") as f:
        f.write('add_test(broken "true"\n')
    broken = os.path.join(WORK, "compat_ctest_broken.h5")
    run("run", COMPAT, f"--campaign.results={broken}", "--evaluate.suite=ctest",
        f"--evaluate.command=env FLOTILLA_SAMPLE_VARIANT={{variant}} ctest --test-dir {tree}-{{variant}}", "--no-live")
    s = summary(broken)
    reasons = [c["reason"] for c in s["rolled_back"] if "variant=b" in c["config"]]
    check(len(reasons) == 4 and all("test discovery" in r and "ended with exit code 8: CMake Error" in r for r in reasons),
          f"ctest discovery failure: {reasons}")
    check(all("variant=b" in c["config"] for c in s["rolled_back"]), f"only b's discovery fails: {s['rolled_back']}")

    # A new campaign under the same name does not reuse the reports and discoveries an earlier
    # one left: with its results file gone, a test added since is discovered and run.
    with open(os.path.join(tree, "CTestTestfile.cmake"), "a") as f:
        f.write('add_test(added_later "false")\n')
    os.remove(results)
    again = run("run", COMPAT, f"--campaign.results={results}", "--evaluate.suite=ctest",
                f"--evaluate.command=env FLOTILLA_SAMPLE_VARIANT={{variant}} ctest --test-dir {tree}", "--no-live")
    check("left by an earlier campaign" in again.stderr, "the old reports folder is cleared, saying so")
    got = tests(results, 0)["summary"]
    check((got["total"], got["fail"]) == (7, 2), f"ctest after adding a test: {got}")


if __name__ == "__main__":
    for name in os.listdir(WORK):
        if name.startswith((PREFIX + "compat", PREFIX + "suite_files", "suite_gates")) and name.endswith((".h5", ".tests", ".jobs")):
            subprocess.run(["rm", "-rf", os.path.join(WORK, name)])
    compat()
    if not EXTRA:
        flaky()
        files()
        gates()
        ctest()
    print("ok")
