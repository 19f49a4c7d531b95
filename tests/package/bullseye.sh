#!/usr/bin/env bash
# The relocatable ddprun where glibc is older than the build machine's: a Debian 11 root
# (bullseye: glibc 2.31, Python 3.9, pip 20.3; scripts/test-root.sh, cached). In it (in_root.sh):
# ddprun_glibc_probe (constructors once, exceptions, getaddrinfo of localhost and of an
# /etc/hosts name, the shims); the wheel pip-installed offline into a fresh venv, ddprun
# --version, python -m ddprun --version, a 2-worker job, two agents rendezvousing over c10d at
# localhost:PORT, a static rendezvous at the /etc/hosts name, a usage error (exit 2), pip
# uninstall; and the tarball's binary running the same 2-worker job. Exit 77 (skipped) with one
# line saying why only when the root can neither be made nor found in the cache (no root
# privileges, no mmdebstrap, no network and no cached root), and never under CI=true, where that
# is a failure. The run in the root is bounded:
# SIGKILL after run_limit ends unshare, and its PID namespace, with every process left in it,
# dies with it.
#   tests/package/bullseye.sh RELOC_DIR      (RELOC_DIR: what scripts/relocatable.sh made)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(realpath "$1")
bin=$dir/src/ddprun
head_name=ddprun-head.test
run_limit=540
fail() {
  echo "bullseye: FAIL: $*" >&2
  exit 1
}
[ -x "$bin" ] && [ -x "$dir/ddprun_glibc_probe" ] ||
  fail "$bin or $dir/ddprun_glibc_probe is missing (the reloc_build test makes them)"
tarball=$(find "$dir" -maxdepth 1 -name "ddprun-*-linux-x86_64.tar.gz" | head -1)
[ -n "$tarball" ] || fail "no ddprun-*-linux-x86_64.tar.gz in $dir (the reloc_build test makes it)"

errors=$(mktemp)
set +e
root=$(bash scripts/test-root.sh make bullseye bullseye python3 python3-venv python3-pip 2>"$errors")
made=$?
set -e
why=$(cat "$errors")
rm -f "$errors"
if [ "$made" -eq 0 ] && [ -n "$why" ]; then
  echo "$why" >&2  # a warning: the cached root is used
fi
if [ "$made" -ne 0 ]; then
  if [ "$made" -eq 3 ] && [ "${CI:-}" != true ]; then
    echo "bullseye: skipped: ${why#test-root: }"
    exit 77
  fi  # under CI=true a root that cannot be made is a failure (issue #25)
  fail "$why"
fi

# Work trees a killed run left in the cached root (older than a day), then this run's.
find "$root/tmp" -maxdepth 1 -name 'ddprun-reloc-*' -mtime +0 -exec rm -rf {} +
work=$(mktemp -d "$root/tmp/ddprun-reloc-XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 143' TERM INT
bash scripts/wheel.sh --binary "$bin" --out "$work" >/dev/null
tar -C "$work" -xzf "$tarball"
cp tests/package/in_root.sh "$dir/ddprun_glibc_probe" "$work/"
inner=/tmp/$(basename "$work")
timeout -s KILL $run_limit bash scripts/test-root.sh run bullseye --host "127.0.0.1 $head_name" \
  /bin/bash "$inner/in_root.sh" "$inner" "$head_name"
