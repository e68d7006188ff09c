#!/usr/bin/env python3
"""A scripted proposer for configs/decode_propose.ini (docs/propose.md): the seeds' loop of
profile, propose, verify, re-profile. Each stage's context names the component the profile found
to be the bottleneck (context["stage"]); the proposer answers with a patch of the engine for that
component, built on the stage's incumbent, and says done when it has none left for it:

  gemv       gemv_unroll   unroll the matrix-vector products by 4, 64 rows a block
  attention  attn_split    split the key/value cache in 4, unroll the dot products by 8
  norm       fuse_norm     fuse the residual add with RMSNorm
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
PATCHES = {"gemv": ["gemv_unroll"], "attention": ["attn_split"], "norm": ["fuse_norm"]}
stage = context["stage"] or {}
component = stage.get("component")
tried = {p["name"] for p in context["proposals"]}
todo = [name for name in PATCHES.get(component, []) if name not in tried]
print(f"proposer: stage {stage.get('index')}: bottleneck {component} "
      f"({100 * stage.get('share', 0):.0f}% of the time); profile {stage.get('profile')}")
if not todo:
    with open(os.path.join(out, "done"), "w") as f:
        f.write(f"no patch for {component}\n")
    sys.exit(0)
name = todo[0]
shutil.copy(os.path.join(here, "patches", name + ".patch"), os.path.join(out, name + ".patch"))
with open(os.path.join(out, name + ".json"), "w") as f:
    json.dump({"parent": "best", "rationale": f"{component} is {100 * stage.get('share', 0):.0f}% of the time"}, f)
print(f"proposer: {name}")
