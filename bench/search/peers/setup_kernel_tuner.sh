#!/bin/bash
# setup_kernel_tuner.sh — Kernel Tuner 1.0 and python-constraint2 2.0.0b5 (its one dependency
# Debian 12 lacks; its pure-Python modules are used) checked out from git into a folder outside
# the repository, for bench/search/peers/run_kernel_tuner.py. Only the bench uses it: nothing in
# flotilla imports or needs Kernel Tuner.
#
# usage: setup_kernel_tuner.sh [DEST]     (default: $HOME/.cache/flotilla-peers)
#   KERNEL_TUNER_GIT=DIR   a clone (or bare git directory) of github.com/KernelTuner/kernel_tuner
#   CONSTRAINT_GIT=DIR     a clone (or bare git directory) of github.com/python-constraint/python-constraint
# Without them the two repositories are cloned into DEST/src (needs the network).
# The rest comes from Debian 12's packages under /usr/bin/python3: numpy, scipy, scikit-learn
# (Kernel Tuner's Bayesian optimisation), pandas, jsonschema, xmltodict, packaging:
#   apt-get install python3-numpy python3-scipy python3-sklearn python3-pandas python3-jsonschema python3-xmltodict python3-packaging
# Prints the line to put in front of run_kernel_tuner.py (PYTHONPATH) and ends with a smoke test.
set -euo pipefail
DEST=${1:-$HOME/.cache/flotilla-peers}
KT_TAG=1.0
PC_TAG=2.0.0b5
mkdir -p "$DEST/src"
DEST=$(cd "$DEST" && pwd)

gitdir() {  # a clone's .git, or a bare repository, as --git-dir
  if [ -d "$1/.git" ]; then echo "$1/.git"; else echo "$1"; fi
}
if [ -z "${KERNEL_TUNER_GIT:-}" ]; then
  [ -d "$DEST/src/kernel_tuner" ] || git clone --quiet https://github.com/KernelTuner/kernel_tuner "$DEST/src/kernel_tuner"
  KERNEL_TUNER_GIT=$DEST/src/kernel_tuner
fi
if [ -z "${CONSTRAINT_GIT:-}" ]; then
  [ -d "$DEST/src/python-constraint" ] || git clone --quiet https://github.com/python-constraint/python-constraint "$DEST/src/python-constraint"
  CONSTRAINT_GIT=$DEST/src/python-constraint
fi

SITE=$DEST/kernel_tuner-$KT_TAG
rm -rf "$SITE"
mkdir -p "$SITE"
git --git-dir="$(gitdir "$KERNEL_TUNER_GIT")" archive "$KT_TAG" kernel_tuner LICENSE | tar -x -C "$SITE"
# python-constraint2: only the .py modules (the .c files are Cython's output, not needed).
git --git-dir="$(gitdir "$CONSTRAINT_GIT")" archive "$PC_TAG" constraint LICENSE | tar -x -C "$SITE" --transform 's,^LICENSE$,LICENSE.python-constraint,'
rm -f "$SITE"/constraint/*.c
# kernel_tuner/__init__.py asks importlib.metadata for its own version: give both packages the
# metadata pip would have written.
for pkg in "kernel_tuner $KT_TAG" "python_constraint2 $PC_TAG"; do
  set -- $pkg
  mkdir -p "$SITE/$1-$2.dist-info"
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$1" "$2" > "$SITE/$1-$2.dist-info/METADATA"
done
echo "$(git --git-dir="$(gitdir "$KERNEL_TUNER_GIT")" rev-parse "$KT_TAG^{commit}") kernel_tuner $KT_TAG" > "$SITE/SOURCES"
echo "$(git --git-dir="$(gitdir "$CONSTRAINT_GIT")" rev-parse "$PC_TAG^{commit}") python-constraint $PC_TAG" >> "$SITE/SOURCES"

missing=""
for m in numpy scipy sklearn pandas jsonschema xmltodict packaging; do
  /usr/bin/python3 -c "import $m" 2>/dev/null || missing="$missing $m"
done
if [ -n "$missing" ]; then
  echo "setup_kernel_tuner.sh: /usr/bin/python3 lacks:$missing" >&2
  echo "  apt-get install python3-numpy python3-scipy python3-sklearn python3-pandas python3-jsonschema python3-xmltodict python3-packaging" >&2
  exit 1
fi
PYTHONPATH=$SITE /usr/bin/python3 -c "import kernel_tuner, constraint; print('kernel_tuner', kernel_tuner.__version__, 'from', kernel_tuner.__file__)"
cat "$SITE/SOURCES"
echo "run the peers with: PYTHONPATH=$SITE /usr/bin/python3 bench/search/peers/run_kernel_tuner.py SPACES_DIR ..."
echo "or: bench/search/peers/run_kernel_tuner.py SPACES_DIR --kernel-tuner $SITE ..."
