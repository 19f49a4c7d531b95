#!/usr/bin/env bash
# Configures and builds ddprun into a build directory: scripts/build.sh [DIR] [cmake args...]
# Everything (tests included) unless TARGETS names some: TARGETS=ddprun scripts/build.sh build
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# shellcheck disable=SC2086 # TARGETS is a list of target names
cmake --build "$dir" -j"$(nproc)" ${TARGETS:+--target $TARGETS}
