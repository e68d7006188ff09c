#!/usr/bin/env bash
# install-deps.sh — every Debian 12 (bookworm) package flotilla builds, runs and tests with.
# Idempotent; no recommends. Daemons are not started by the packages (no systemd here):
# tests start their own Slurm cluster and stop it by PID.
# The CUDA 13 toolkit with NCCL is not a Debian package; when /usr/local/cuda/bin/nvcc exists the
# build picks it up (FLOTILLA_WITH_CUDA=AUTO), otherwise GPU code is left out with a notice.
# clang-16 with its compiler-rt (libFuzzer, ASan/UBSan/TSan runtimes) and llvm-16 (llvm-symbolizer)
# serve the sanitizer and fuzzing builds only (docs/verification.md); the normal build uses g++.
# llvm-15-tools (lit, FileCheck-15) and python3-pytest run configs/lit.ini and configs/pytest.ini
# and their tests (evaluate.suite = lit | pytest; docs/tests.md).
# patch applies proposers' patches to candidates' trees; python3-jsonschema checks the proposer
# context against its schema in the tests (docs/propose.md).
# chromium (headless) renders `flotilla results report`'s HTML in its test, as a browser would
# (docs/analysis.md); flotilla itself never runs it.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
sudo_if_needed apt-get update
sudo_if_needed apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 \
  g++ make cmake pkg-config \
  libboost-program-options-dev \
  libhdf5-dev hdf5-tools \
  libopenmpi-dev openmpi-bin \
  libtrilinos-kokkos-dev \
  libslurm-dev slurmctld slurmd slurm-client munge \
  libmuparser-dev nlohmann-json3-dev libfmt-dev zlib1g-dev \
  libgtest-dev libgmock-dev googletest \
  libxml2-dev libsqlite3-dev libpcre2-dev \
  llvm-15-tools python3-pytest \
  python3 python3-h5py python3-pandas \
  gnuplot-nox parallel spin \
  patch python3-jsonschema \
  python3-optuna \
  chromium \
  clang-16 libclang-rt-16-dev llvm-16
