#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install packages, build ddprun, then train the
# minGPT example with 2 CPU workers (gloo) under `ddprun --standalone --nproc_per_node 2`.
# Extra arguments go to the trainer (e.g. --epochs 2).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The job needs only the binary: the test targets are built by scripts/test.sh.
TARGETS=ddprun bash scripts/build.sh build
snapshot=$(mktemp -d)/snapshot.pt
# /usr/bin/python3 is Debian's interpreter with python3-torch; a `python3` earlier on PATH
# may not have torch, so the interpreter is named explicitly.
exec ./build/src/ddprun --standalone --nproc_per_node 2 --python /usr/bin/python3 \
  examples/mingpt/train.py --epochs 4 --snapshot-path "$snapshot" "$@"
