#!/usr/bin/env bash
# Long libFuzzer runs: every target built in BUILD_DIR (clang, -DDDPRUN_FUZZ=ON; the CI's
# build-ci-asan adds ASan and UBSan) runs RUNS inputs (-runs) on a scratch copy of its committed
# corpus, with the flags of tests/fuzz/<target>.options, and a Markdown table of executions,
# time, exec/s, load average and crashes is printed at the end. Exits 1 if any target crashed
# (or reported a sanitizer error, a leak, a slow input or too much memory); the reproducer and
# the log stay in the printed scratch directory. Nothing is written into the repository.
#   scripts/fuzz-long.sh [BUILD_DIR] [RUNS] [TARGET...]  (defaults: build-ci-asan, 10000000, all)
# Environment: FUZZ_JOBS=N runs N targets at a time (default 1); FUZZ_WORKERS=W runs each target
# as W processes on one shared corpus (libFuzzer reloads it, so each sees what the others find),
# each running RUNS/W inputs, and the table sums their executions (default 1); FUZZ_MAX_SECONDS=S
# stops each target after S seconds (default: no limit), and the table then shows the executions
# reached.
# On a shared machine: nice -n 19 scripts/fuzz-long.sh build-ci-asan
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/fuzz-lib.sh

build=${1:-build-ci-asan}
runs=${2:-10000000}
shift $(($# < 2 ? $# : 2))
targets=("$@")
((${#targets[@]})) || targets=("${fuzz_targets[@]}")
jobs=${FUZZ_JOBS:-1}
workers=${FUZZ_WORKERS:-1}
max_seconds=${FUZZ_MAX_SECONDS:-0}
for value in "$runs" "$jobs" "$workers" "$max_seconds"; do
  if ! [[ $value =~ ^[0-9]+$ ]]; then
    echo "fuzz-long: RUNS, FUZZ_JOBS, FUZZ_WORKERS and FUZZ_MAX_SECONDS must be integers" \
      "(got '$value')" >&2
    exit 2
  fi
done
if ((workers < 1)); then
  echo "fuzz-long: FUZZ_WORKERS must be at least 1 (got '$workers')" >&2
  exit 2
fi
for target in "${targets[@]}"; do
  fuzz_binary "$build" "$target" >/dev/null || exit 2
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ddprun-fuzz-long.XXXXXX")
echo "fuzz-long: $runs runs per target, $jobs at a time, $workers process(es) each; scratch $scratch"

load() { cut -d' ' -f1-3 /proc/loadavg; }
stat_of() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }

# Runs one target as WORKERS processes on one corpus and writes WORK/row:
# target|execs|seconds|exec/s|load|crashes|status (execs summed over the processes).
run_target() {
  local target=$1 work=$scratch/$1 bin flags start end rc=0 load_start execs=0 seconds crashes w n
  local -a pids=()
  bin=$(fuzz_binary "$build" "$target")
  fuzz_scratch "$target" "$work"
  mapfile -t flags < <(fuzz_options "$target")
  ((max_seconds == 0)) || flags+=("-max_total_time=$max_seconds")
  flags+=("-runs=$(((runs + workers - 1) / workers))" "-rss_limit_mb=$fuzz_rss_limit_mb"
    "-timeout=$fuzz_slow_input_s" -print_final_stats=1 "-artifact_prefix=$work/artifacts/")
  echo "$bin ${flags[*]} $work/corpus  # x$workers" >"$work/command"
  echo "== $target started $(date -u +%H:%M:%S), load $(load): $(cat "$work/command")"
  load_start=$(load)
  start=$(date +%s)
  for ((w = 0; w < workers; w++)); do
    "$bin" "${flags[@]}" "$work/corpus" >"$work/log.$w" 2>&1 &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || rc=$?
  done
  end=$(date +%s)
  for ((w = 0; w < workers; w++)); do
    n=$(stat_of number_of_executed_units "$work/log.$w")
    execs=$((execs + ${n:-0}))
  done
  seconds=$((end - start > 0 ? end - start : 1))
  crashes=$(find "$work/artifacts" -type f | wc -l)
  local status="done"
  if ((rc != 0 || crashes > 0)); then
    status="FAILED (exit $rc; logs $work/log.*)"
    crashes=$((crashes > 0 ? crashes : 1))
  elif ((execs < runs)); then
    status="time limit"
  fi
  echo "$target|$execs|$seconds|$((execs / seconds))|$load_start / $(load)|$crashes|$status" \
    >"$work/row"
  echo "== $target ended $(date -u +%H:%M:%S): $execs execs in ${seconds} s, $status"
}

for target in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= (jobs > 0 ? jobs : 1))); do
    wait -n || true
  done
  run_target "$target" &
done
wait

echo
echo "| target | execs | time (s) | exec/s | load avg (start / end) | crashes | status |"
echo "|---|---:|---:|---:|---|---:|---|"
failed=0
for target in "${targets[@]}"; do
  row=$(cat "$scratch/$target/row" 2>/dev/null || echo "$target|0|0|0|-|1|FAILED (no result)")
  IFS='|' read -r name execs seconds rate loads crashes status <<<"$row"
  echo "| \`$name\` | $execs | $seconds | $rate | $loads | $crashes | $status |"
  ((crashes == 0)) || failed=1
done
if ((failed)); then
  echo "fuzz-long: a target crashed; reproducers under $scratch/<target>/artifacts/" >&2
  exit 1
fi
echo "fuzz-long: 0 crashes; commands and logs in $scratch"
