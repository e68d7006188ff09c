"""The pandas reader's per-test outcomes agree with `flotilla results tests --json`.

usage: check_tests_reader.py READER_DIR FILE.h5 CLI.json CANDIDATE
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
import flotilla_results  # noqa: E402

path, cli_json, candidate = sys.argv[2], sys.argv[3], int(sys.argv[4])
cli = json.load(open(cli_json))
tests = flotilla_results.read_campaign(path).tests
assert tests is not None, f"{path}: the reader found no per-test outcomes"
mine = tests[tests["candidate"] == candidate]
counts = mine["outcome"].value_counts()
for outcome in ("pass", "fail", "skip", "error", "timeout", "not_run"):
    got, want = int(counts.get(outcome, 0)), cli["summary"][outcome]
    assert got == want, f"{outcome}: reader {got}, CLI {want}"
assert len(mine) == cli["summary"]["total"], f"total: reader {len(mine)}, CLI {cli['summary']['total']}"
assert sorted(mine[mine["flaky"]]["test"]) == sorted(cli["flaky"]), "flaky tests differ"
print(f"{path}: candidate {candidate}: reader and CLI agree on {len(mine)} tests")
