#!/usr/bin/env bash
# ddprun with a newer torch's workers: the relocatable binary (it needs only glibc) run in a cached
# Debian root (scripts/torch-root.sh: trixie's python3-torch 2.6.0 with Python 3.13, or forky's
# 2.14.1 with Python 3.14, Accelerate and Transformers; the root's torch patched to default
# TCPStore to use_libuv=False), with the source tree and a work directory bound in; in_root.sh
# runs the checks of SET (core or full).
# Exit 77 (skipped) with one line when the root can be neither made nor found in the cache, except
# under CI=true, where that is a failure.
#   torch2.sh RELOC_DIR SOURCE_DIR SUITE SET
set -euo pipefail
reloc=$1 src=$(cd "$2" && pwd) suite=$3 set=$4
ddprun=$reloc/src/ddprun
[ -x "$ddprun" ] || { echo "torch2: FAILED: no relocatable ddprun at $ddprun"; exit 1; }
errors=$(mktemp)
set +e
root=$(bash "$src/scripts/torch-root.sh" "$suite" 2>"$errors")
made=$?
set -e
why=$(cat "$errors")
rm -f "$errors"
if [ "$made" -ne 0 ]; then
  if [ "$made" -eq 3 ] && [ "${CI:-}" != true ]; then
    echo "torch2: skipped: ${why#test-root: }"
    exit 77
  fi
  echo "torch2: FAILED: $why"
  exit 1
fi
work=$(mktemp -d "$root/tmp/ddprun-torch2-XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$ddprun" "$work/ddprun"
timeout -s KILL 570 bash "$src/scripts/test-root.sh" run "$suite" --bind "$src" \
  env -i PATH=/usr/bin:/bin HOME=/root TMPDIR="${work#"$root"}" \
  bash "$src/tests/torch2/in_root.sh" "${work#"$root"}/ddprun" "$src" "${work#"$root"}" "$set"
