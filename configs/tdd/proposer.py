#!/usr/bin/env python3
"""A scripted proposer for configs/tdd.ini (docs/propose.md): "fix this program until the suite
passes". It reads the files the best candidate still fails from the context and answers with the
first fix of a prepared list that targets one of them, built on the best verified candidate:

  multiply        * and /                          mul_*, div_*
  parentheses     ( )                              paren_*
  unary_minus     -x                               neg_*
  compare_broken  < and >, with an associativity   cmp_* (3 of 4), and it breaks sub_5:
                  slip in a - b - c                rolled back (require = no_regression)
  compare         < > ==                           cmp_*
  modulo          %                                mod_*
  power           ^, right-associative             pow_*
  errors          division by zero, missing )      err_*

A fix is proposed once; when none targets what still fails, it writes {out}/done.
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
FIXES = [("multiply", ("mul_", "div_")), ("parentheses", ("paren_",)), ("unary_minus", ("neg_",)),
         ("compare_broken", ("cmp_",)), ("compare", ("cmp_",)), ("modulo", ("mod_",)), ("power", ("pow_",)),
         ("errors", ("err_",))]
best = context["best"] or {}
failing = [os.path.basename(name) for name in (best.get("tests") or {}).get("failing", [])]
tried = {p["name"] for p in context["proposals"]}
print(f"proposer: round {context['round']}: the best ({best.get('name')}) fails {len(failing)} files: "
      f"{' '.join(failing[:8])}{' ...' if len(failing) > 8 else ''}")
for name, prefixes in FIXES:
    if name in tried or not any(f.startswith(prefixes) for f in failing):
        continue
    shutil.copy(os.path.join(here, "patches", name + ".patch"), os.path.join(out, name + ".patch"))
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump({"parent": "best", "rationale": f"fixes {', '.join(p + '*' for p in prefixes)}"}, f)
    print(f"proposer: {name}")
    break
else:
    with open(os.path.join(out, "done"), "w") as f:
        f.write("no prepared fix targets what still fails\n" if failing else "every file passes\n")
