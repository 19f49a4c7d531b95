#!/usr/bin/env bash
# A launcher prefix for the benchmarks that runs CMD in a Debian root with a newer torch
# (scripts/torch-root.sh SUITE, made and patched beforehand): trixie for torchrun 2.6, forky for
# torchrun 2.14, and ddprun's relocatable binary beside it so that both pay the same entry cost
# (unshare, mounts, chroot). The checkout and the temporary directory are bound in at their own
# paths; the variables named in IN_ROOT_PASS (default RESTART_BENCH_DIR) are passed through,
# nothing else of this environment.
#   bench/in-root.sh SUITE CMD [ARG...]
#   e.g. --launcher 'torchrun 2.14=bench/in-root.sh forky torchrun --monitor_interval 0.1'
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
suite=${1:?usage: in-root.sh SUITE CMD [ARG...]}
shift
tmp=${TMPDIR:-/tmp}
pass=(TMPDIR="$tmp")
for name in ${IN_ROOT_PASS:-${IN_TRIXIE_PASS:-RESTART_BENCH_DIR}}; do
  [ -n "${!name+set}" ] && pass+=("$name=${!name}")
done
exec bash "$repo/scripts/test-root.sh" run "$suite" --bind "$repo" --bind "$tmp" \
  env "${pass[@]}" "$@"
