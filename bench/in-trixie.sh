#!/usr/bin/env bash
# A launcher prefix for the benchmarks that runs CMD in the Debian 13 root (scripts/torch-root.sh trixie,
# made and patched beforehand): torchrun 2.6 as the second reference, and ddprun's relocatable
# binary beside it so that both pay the same entry cost (unshare, mounts, chroot; the row
# `in-trixie floor` measures it with /bin/true). The checkout and the temporary directory are
# bound in at their own paths; the variables named in IN_TRIXIE_PASS (default RESTART_BENCH_DIR)
# are passed through, nothing else of this environment.
#   bench/in-trixie.sh CMD [ARG...]
#   e.g. --launcher 'torchrun 2.6=bench/in-trixie.sh torchrun --monitor_interval 0.1'
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TMPDIR:-/tmp}
pass=(TMPDIR="$tmp")
for name in ${IN_TRIXIE_PASS:-RESTART_BENCH_DIR}; do
  [ -n "${!name+set}" ] && pass+=("$name=${!name}")
done
exec bash "$repo/scripts/test-root.sh" run trixie --bind "$repo" --bind "$tmp" \
  env "${pass[@]}" "$@"
