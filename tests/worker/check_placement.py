#!/usr/bin/python3
"""Where each trial of a campaign run on the mpi backend ran, read with h5py.

usage: check_placement.py FILE.h5 --ranks N [--expect-requeued]
Fails (exit 1) unless every trial names a worker rank (1..N-1), a host and a device; with
--expect-requeued, unless some trial completed on a later attempt and the journal says why.
"""
import argparse
import sys

import h5py


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--expect-requeued", action="store_true")
    args = ap.parse_args()
    with h5py.File(args.file, "r", swmr=True) as f:
        trials = f["trials"][:]
        events = [(e["kind"].decode(), e["detail"].decode()) for e in f["events"][:]]
    bad = [t for t in trials
           if not 1 <= int(t["rank"]) < args.ranks or not t["host"] or not t["device"]]
    if bad:
        sys.exit(f"{len(bad)} trials without a worker rank, host or device, e.g. {bad[0]}")
    ranks = sorted({int(t["rank"]) for t in trials})
    print(f"{args.file}: {len(trials)} trials on ranks {ranks}, devices {sorted({t['device'].decode() for t in trials})}")
    if args.expect_requeued:
        retried = [t for t in trials if int(t["attempt"]) > 0]
        requeued = [d for k, d in events if k == "task_requeued"]
        if not retried or not requeued:
            sys.exit(f"expected re-queued tasks: {len(retried)} trials on a later attempt, {len(requeued)} events")
        if "rank died" not in requeued[0]:
            sys.exit(f"requeue event without the reason: {requeued[0]}")
        print(f"{len(requeued)} tasks re-queued after a rank died, e.g. {requeued[0]}")


if __name__ == "__main__":
    main()
