#!/usr/bin/env python3
"""A scripted proposer for configs/propose.ini (docs/propose.md): it reads the context flotilla
writes and answers from a prepared list, one proposal a round, as a person or a coding agent
would after looking at what the last round showed:

  interchange     loop order i, k, j: a faster multiply with the same result (built on the baseline)
  skip_half_k     faster and wrong: --verify fails, so it is rolled back
  no_such_helper  calls a function the tree does not have: build_failed, with the compiler's error
  row_pointers    row pointers instead of checked indexing, and four rows of B a pass (C's row is
                  loaded and stored a quarter as often), written against the interchanged
                  loop: it waits until `interchange` is the best verified candidate, then builds
                  on it (parent "best"), so the winner is a chain of two patches

Then it writes {out}/done, and flotilla does not run it again.

usage: proposer.py CONTEXT OUT
"""
import json
import os
import shutil
import sys

context_path, out = sys.argv[1:3]
with open(context_path) as f:
    context = json.load(f)
here = os.path.dirname(os.path.abspath(__file__))
PLAN = [
    ("interchange", "baseline", "B is walked down its columns: one cache miss per multiply-add"),
    ("skip_half_k", "baseline", "half the k iterations, doubled (wrong on purpose: verification must catch it)"),
    ("no_such_helper", "baseline", "a fused helper that does not exist (a patch that does not compile)"),
    ("row_pointers", "best", "checked indexing in the inner loop, and C's row loaded and stored once per k: row pointers, four rows of B a pass"),
]
tried = {p["name"] for p in context["proposals"]}
best_chain = [step["name"] for step in (context["best"] or {}).get("chain", [])]
for name, parent, why in PLAN:
    if name in tried:
        continue
    if name == "row_pointers" and "interchange" not in best_chain:
        print(f"proposer: waiting for interchange to be the best (best chain: {best_chain or 'none'})")
        sys.exit(0)
    shutil.copy(os.path.join(here, "patches", name + ".patch"), os.path.join(out, name + ".patch"))
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump({"parent": parent, "rationale": why}, f)
    print(f"proposer: round {context['round']}: {name} on {parent} ({why})")
    break
else:
    # Everything on the list was tried: say so, and flotilla does not run this proposer again.
    with open(os.path.join(out, "done"), "w") as f:
        f.write("every prepared patch was proposed\n")
    print("proposer: nothing left to propose")
