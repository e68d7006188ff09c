# lit.cfg.py — configs/lit.ini's test suite (evaluate.suite = lit; docs/tests.md). Each test runs
# Inputs/emit.sh, the "candidate" (its variant comes in as --param variant=...), and checks its
# output with FileCheck (LLVM 15). Variant b prints a wrong sum, so basic/sum.txt fails for it.
import os

import lit.formats

config.name = "flotilla-lit"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".txt"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.test_source_root

variant = lit_config.params.get("variant", "a")
filecheck = lit_config.params.get("filecheck", "FileCheck-15")
config.substitutions.append(("%emit", "sh " + os.path.join(config.test_source_root, "Inputs", "emit.sh") + " " + variant))
config.substitutions.append(("%FileCheck", filecheck))
config.available_features.add("variant-" + variant)
