#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: install packages, check formatting,
# build with g++ (warnings are errors) and run every test; build with clang + TSan and run the
# suite under it; build with clang + ASan/UBSan (and the libFuzzer targets), run clang-tidy with
# that build's compile commands, run the suite again under ASan/UBSan, and give each fuzzer a
# 60-second smoke run on its committed corpus. The relocatable binary's tests run in the g++ pass
# only: label `package` (its own Release build into build-ci/reloc, a Debian 11 root) and label
# `torch2` (torch 2.14 workers, with Accelerate and Transformers, in a Debian forky root; torch
# 2.6 workers in a Debian 13 root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

echo "== format (clang-format 14, .clang-format)"
bash scripts/check-format.sh

echo "== g++ build (warnings as errors)"
bash scripts/build.sh build-ci -DDDPRUN_WERROR=ON
echo "== tests (g++)"
ctest --test-dir build-ci --output-on-failure -j2 --timeout 600

echo "== clang + TSan build"
CC=clang CXX=clang++ bash scripts/build.sh build-ci-tsan -DDDPRUN_WERROR=ON -DDDPRUN_TSAN=ON
echo "== tests (clang, TSan)"
# clang 14's TSan aborts ("unexpected memory mapping") where the kernel randomises mmap with
# more than 28 bits (vm.mmap_rnd_bits, raised by newer kernels); without ASLR it runs anywhere.
no_aslr=()
if (($(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0) > 28)); then
  no_aslr=(setarch "$(uname -m)" -R)
fi
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  "${no_aslr[@]}" ctest --test-dir build-ci-tsan --output-on-failure -j2 --timeout 900 -LE "package|torch2"

echo "== clang + ASan/UBSan build (and the fuzzers)"
CC=clang CXX=clang++ bash scripts/build.sh build-ci-asan -DDDPRUN_WERROR=ON \
  -DDDPRUN_ASAN=ON -DDDPRUN_UBSAN=ON -DDDPRUN_FUZZ=ON
echo "== clang-tidy over src/, tests/, bench/ (.clang-tidy, with the ASan build's compile commands)"
bash scripts/tidy.sh build-ci-asan
echo "== tests (clang, ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-ci-asan --output-on-failure -j2 --timeout 900 -LE "package|torch2"
echo "== fuzz smoke (60 s per target)"
bash scripts/fuzz-smoke.sh build-ci-asan 60
