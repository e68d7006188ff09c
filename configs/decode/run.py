#!/usr/bin/env python3
"""run.py ENGINE.CONF [OPTION ...] — runs flotilla-kernel decode with the settings of
ENGINE.CONF (lines "name = value"; # starts a comment) and the same model shape every time; the
options after ENGINE.CONF go through (--verify --shard S --shards N). The kernel measures its own
tokens/s, so this wrapper's start-up is not in the measurement."""
import os
import sys

conf, extra = sys.argv[1], sys.argv[2:]
settings = {}
for number, line in enumerate(open(conf), 1):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, eq, value = line.partition("=")
    if not eq:
        sys.exit(f"{conf}:{number}: not 'name = value': {line}")
    settings[name.strip()] = value.strip()
argv = ["flotilla-kernel", "decode", "--layers", "4", "--d-model", "128", "--ffn", "256", "--vocab", "256",
        "--prompt-len", "32", "--tokens", "48", *extra]
for name, value in settings.items():
    argv += ["--" + name.replace("_", "-"), value]
os.execvp(argv[0], argv)
