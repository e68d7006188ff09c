"""tests_table.py — one candidate's run in a campaign file's /tests group (docs/results-schema.md),
read with h5py, for the integration checks of suite campaigns."""

OUTCOMES = {0: "not_run", 1: "pass", 2: "fail", 3: "skip", 4: "error", 5: "timeout"}


def candidate_run(tests, candidate):
    """(its row of /tests/runs, its test names, their outcome words) of the candidate's first run."""
    row = next(r for r in tests["runs"][...] if r["candidate"] == candidate)
    suite = tests["suites"][int(row["suite"])]
    names = bytes(tests["names"][int(suite["names_start"]):int(suite["names_start"] + suite["names_bytes"])])
    names = names.decode().split("\n")[:-1]
    codes = tests["outcomes"][int(row["outcomes_start"]):int(row["outcomes_start"] + row["tests"])]
    return row, names, [OUTCOMES[int(code) & 0xF] for code in codes]
