#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: install packages, build with g++
# (warnings are errors) and run every test; then build with clang + ASan/UBSan and run the
# suite again under the sanitizers, and give each libFuzzer target (built by that same clang
# build) a 60-second smoke run on its committed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

echo "== g++ build (warnings as errors)"
bash scripts/build.sh build-ci -DDDPRUN_WERROR=ON
echo "== tests (g++)"
ctest --test-dir build-ci --output-on-failure -j2 --timeout 600

echo "== clang + ASan/UBSan build (and the fuzzers)"
CC=clang CXX=clang++ bash scripts/build.sh build-ci-asan -DDDPRUN_WERROR=ON \
  -DDDPRUN_ASAN=ON -DDDPRUN_UBSAN=ON -DDDPRUN_FUZZ=ON
echo "== tests (clang, ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-ci-asan --output-on-failure -j2 --timeout 900
echo "== fuzz smoke (60 s per target)"
bash scripts/fuzz-smoke.sh build-ci-asan 60
