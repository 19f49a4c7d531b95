#!/bin/bash
# Determinism + fault-tolerance check for the minGPT example (about 15-25 s on 2 cores).
#   LAUNCHER="build/src/ddprun" examples/mingpt/check_resume.sh [WORKDIR]
# LAUNCHER: launcher command prefix (default: tools/torchrun-patched --monitor_interval 0.1).
# 1. trains 2 ranks x 3 epochs x 10 steps from scratch  -> params_sha256 A (both ranks agree)
# 2. same, with --max_restarts 1 and rank 1 crashing at global step 15 on attempt 0:
#    the job must restart, resume from the epoch-1 snapshot and end with the same hash A.
# Exit 0 when both hold; otherwise prints why and the log paths, exits 1.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
launcher="${LAUNCHER:-$root/tools/torchrun-patched --monitor_interval 0.1}"
work="${1:-$(mktemp -d /tmp/mingpt_check.XXXXXX)}"
mkdir -p "$work"
export PYTHON_EXEC="${PYTHON_EXEC:-/usr/bin/python3}"
common=(--epochs 3 --max-steps-per-epoch 10 --log-every 5)

fail() { echo "check_resume: FAIL: $*" >&2; exit 1; }

hashes() {  # distinct params_sha256 values in a log
    grep -o 'params_sha256 [0-9a-f]*' "$1" | awk '{print $2}' | sort -u
}

# shellcheck disable=SC2086
$launcher --standalone --nproc_per_node 2 "$here/train.py" "${common[@]}" \
    --snapshot-path "$work/plain.pt" > "$work/plain.log" 2>&1 \
    || fail "plain run failed: $work/plain.log"
[ "$(grep -c 'params_sha256' "$work/plain.log")" = 2 ] \
    || fail "plain run: want 2 final lines: $work/plain.log"
plain="$(hashes "$work/plain.log")"
[ "$(echo "$plain" | wc -l)" = 1 ] || fail "ranks disagree in $work/plain.log"

# shellcheck disable=SC2086
$launcher --standalone --nproc_per_node 2 --max_restarts 1 "$here/train.py" "${common[@]}" \
    --snapshot-path "$work/ft.pt" --crash-at-step 15 --crash-rank 1 \
    > "$work/ft.log" 2>&1 || fail "fault-tolerant run failed: $work/ft.log"
grep -q 'injected crash at step 15' "$work/ft.log" || fail "no injected crash in $work/ft.log"
[ "$(grep -c 'resuming from snapshot .* at epoch 1' "$work/ft.log")" = 2 ] \
    || fail "both ranks should resume at epoch 1: $work/ft.log"
ft="$(hashes "$work/ft.log")"
[ "$ft" = "$plain" ] || fail "hash after resume $ft != uninterrupted $plain ($work)"
echo "check_resume: OK params_sha256 $plain ($work)"
