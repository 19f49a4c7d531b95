#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: every check an error) over src/, tests/ and bench/ (and the
# headers they include) with the compile commands of a clang build directory:
# scripts/tidy.sh BUILD_DIR [PATH_REGEX]
# The directory only needs to be configured (CMAKE_EXPORT_COMPILE_COMMANDS is always on);
# CI reuses its clang ASan build (DDPRUN_FUZZ=ON, so tests/fuzz is covered too). PATH_REGEX
# (Python re, searched in each absolute source path) picks fewer files, e.g. "$PWD/src/".
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/tidy.sh BUILD_DIR [PATH_REGEX]}
files=${2:-"$PWD/(src|tests|bench)/"}
if [[ ! -f "$dir/compile_commands.json" ]]; then
  echo "tidy: $dir/compile_commands.json missing; configure $dir with clang first" >&2
  exit 2
fi
if ! grep -q '/clang++' "$dir/compile_commands.json"; then
  echo "tidy: $dir was not configured with clang++ (clang-tidy cannot read g++-only flags)" >&2
  exit 2
fi
# run-clang-tidy always colours and prints every command: keep only the findings.
noise='^([0-9]+ warnings? generated\.|Suppressed [0-9]+ warnings|Use -header-filter|clang-tidy-)'
start=$SECONDS
run-clang-tidy -p "$dir" -j"$(nproc)" -quiet "$files" 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g' | { grep -v -E "$noise" || true; }
echo "tidy: clean ($((SECONDS - start)) s)"
