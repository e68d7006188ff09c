#!/usr/bin/python3
"""A self-sharding TAP suite whose tests depend on a variant, for the test-gate checks.

usage: tap_variant.py --list            prints the suite's test names, one a line
       tap_variant.py VARIANT REPORT    writes the variant's TAP report to REPORT

Variant 1 (the baseline): t1 passes, t2 fails (a known failure), t3 passes.
Variant 2: fixes t2 but silently leaves t3 out (it never reports it): the pass count equals the
baseline's, so only a test-by-test gate sees the regression.
Variant 3: every test passes.
"""
import sys

TESTS = ("t1", "t2", "t3")
if sys.argv[1] == "--list":
    print("\n".join(TESTS))
    sys.exit(0)
variant, report = int(sys.argv[1]), sys.argv[2]
outcomes = {1: {"t1": True, "t2": False, "t3": True},
            2: {"t1": True, "t2": True},
            3: {"t1": True, "t2": True, "t3": True}}[variant]
with open(report, "w") as out:
    out.write(f"1..{len(outcomes)}\n")
    for n, (name, ok) in enumerate(outcomes.items(), 1):
        out.write(f"{'ok' if ok else 'not ok'} {n} - {name}\n")
sys.exit(0 if all(outcomes.values()) else 1)
