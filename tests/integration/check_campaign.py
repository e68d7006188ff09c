#!/usr/bin/python3
"""Independent checks of a campaign file, read with h5py (not with flotilla's own reader).

usage: check_campaign.py FILE.h5 [--expect-best-config TEXT] [--expect-rolled-back N]
                                 [--expect-better-than-baseline] [--dump KEYS.json]
                                 [--compare-with KEYS.json]
Fails (exit 1) when a trial key (candidate, kind, index, attempt) appears twice, when a trial
refers to a missing candidate, or when an expectation does not hold.
"""
import argparse
import json
import math
import sys

import h5py


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--dump")
    ap.add_argument("--compare-with")
    ap.add_argument("--expect-trials", type=int)
    args = ap.parse_args()
    with h5py.File(args.file, "r", swmr=True) as f:
        assert int(f.attrs["flotilla_schema"]) == 2, "schema version"
        candidates = f["candidates"][:]
        trials = f["trials"][:]
    ids = [int(c["id"]) for c in candidates]
    assert ids == list(range(len(ids))), f"candidate ids not dense: {ids}"
    keys = {}
    for t in trials:
        key = (int(t["candidate"]), int(t["kind"]), int(t["index"]), int(t["attempt"]))
        assert key not in keys, f"trial {key} recorded twice"
        assert key[0] < len(ids), f"trial {key} names a missing candidate"
        keys[key] = [float(t["start"]), float(t["end"]), int(t["status"]),
                     None if math.isnan(float(t["objective"])) else float(t["objective"])]
    print(f"{args.file}: {len(ids)} candidates, {len(keys)} trials, no duplicate keys")
    if args.expect_trials is not None and len(keys) != args.expect_trials:
        sys.exit(f"expected {args.expect_trials} trials, found {len(keys)}")
    if args.dump:
        with open(args.dump, "w") as out:
            json.dump([[list(k), v] for k, v in keys.items()], out)
    if args.compare_with:
        with open(args.compare_with) as f:
            before = {tuple(k): v for k, v in json.load(f)}
        lost = [k for k in before if k not in keys]
        changed = [k for k in before if k in keys and keys[k] != before[k]]
        if lost or changed:
            sys.exit(f"trials lost: {lost[:5]} changed: {changed[:5]}")
        print(f"all {len(before)} trials recorded before the kill are kept unchanged")


if __name__ == "__main__":
    main()
