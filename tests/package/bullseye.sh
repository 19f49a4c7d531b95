#!/usr/bin/env bash
# The relocatable ddprun where glibc is older than the build machine's: a Debian 11 root
# (bullseye: glibc 2.31, Python 3.9, pip 20.3; scripts/test-root.sh, cached). In it (in_root.sh):
# the wheel pip-installed offline into a fresh venv, ddprun --version, python -m ddprun --version,
# a 2-worker job, two agents rendezvousing over c10d at localhost:PORT, pip uninstall; and the
# tarball's binary running the same 2-worker job. Exit 77 (skipped) with one line saying why when
# the root cannot be made, except under CI=true, where that is a failure.
#   tests/package/bullseye.sh RELOC_DIR      (RELOC_DIR: what scripts/relocatable.sh made)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(realpath "$1")
bin=$dir/src/ddprun
fail() {
  echo "bullseye: FAIL: $*" >&2
  exit 1
}
[ -x "$bin" ] || fail "$bin is missing (the reloc_build test makes it)"
tarball=$(find "$dir" -maxdepth 1 -name "ddprun-*-linux-x86_64.tar.gz" | head -1)
[ -n "$tarball" ] || fail "no ddprun-*-linux-x86_64.tar.gz in $dir (the reloc_build test makes it)"

set +e
root=$(bash scripts/test-root.sh make bullseye bullseye python3 python3-venv python3-pip 2>&1)
made=$?
set -e
if [ "$made" -ne 0 ]; then
  if [ "$made" -eq 3 ] && [ "${CI:-}" != true ]; then
    echo "bullseye: skipped: ${root#test-root: }"
    exit 77
  fi
  fail "$root"
fi

work=$(mktemp -d "$root/tmp/ddprun-reloc-XXXXXX")
trap 'rm -rf "$work"' EXIT
bash scripts/wheel.sh --binary "$bin" --out "$work" >/dev/null
tar -C "$work" -xzf "$tarball"
cp tests/package/in_root.sh "$work/"
inner=/tmp/$(basename "$work")
bash scripts/test-root.sh run bullseye /bin/bash "$inner/in_root.sh" "$inner"
