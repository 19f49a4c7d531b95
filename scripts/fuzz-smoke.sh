#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR (configured with -DDDPRUN_FUZZ=ON and clang)
# for SECONDS each, one after the other, on a scratch copy of its committed corpus
# (tests/fuzz/corpus/<target>; nothing is written into the repository), with the flags of
# tests/fuzz/<target>.options. Fails on the first
# crash, sanitizer report, leak, timeout or out-of-memory; the reproducer and the log are kept
# in the scratch directory, whose path is printed.
#   scripts/fuzz-smoke.sh [BUILD_DIR] [SECONDS]     (defaults: build-ci-asan, 60)
#   scripts/fuzz-smoke.sh [SECONDS]                 (a lone number is the time)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/fuzz-lib.sh

build="build-ci-asan"
seconds=60
if [[ $# -ge 1 && $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
else
  build=${1:-$build}
  seconds=${2:-$seconds}
fi
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "fuzz-smoke: SECONDS must be a positive integer (got '$seconds')" >&2
  exit 2
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ddprun-fuzz-smoke.XXXXXX")
failed=0
for target in "${fuzz_targets[@]}"; do
  bin=$(fuzz_binary "$build" "$target") || exit 2
  work=$scratch/$target
  fuzz_scratch "$target" "$work"
  mapfile -t flags < <(fuzz_options "$target")
  echo "== $target: ${seconds}s on $(find "$work/corpus" -type f | wc -l) seed inputs ${flags[*]}"
  if "$bin" "${flags[@]}" -max_total_time="$seconds" -rss_limit_mb=$fuzz_rss_limit_mb \
      -timeout=$fuzz_slow_input_s -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
      "$work/corpus" >"$work/log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$work/log" | sed 's/^/   /'
  else
    echo "fuzz-smoke: $target FAILED; log $work/log, reproducer(s) in $work/artifacts/" >&2
    tail -n 40 "$work/log" >&2
    failed=1
  fi
done
if ((failed)); then
  exit 1
fi
rm -rf "$scratch"
echo "fuzz-smoke: every target ran ${seconds}s without a crash"
