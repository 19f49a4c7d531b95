#!/usr/bin/env bash
# Packaging check (run by hand, as root, on a Debian 12 machine without a ddprun package):
#  1. builds the .deb with CPack from BUILD_DIR (default build), shows its control data,
#  2. installs it with apt-get (dependencies from dpkg-shlibdeps), runs ddprun --version,
#     finds the man page and the completions, removes the package again,
#  3. runs scripts/relocatable.sh (skip with --deb-only).
#   bash scripts/package-check.sh [--deb-only]
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build}
jobs=${JOBS:-1}
if dpkg-query -W -f='${Status}' ddprun 2>/dev/null | grep -q "install ok installed"; then
  echo "package-check: a ddprun package is already installed; remove it first" >&2
  exit 2
fi

[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja >/dev/null
ninja -C "$build" -j"$jobs" ddprun ddprun_docs
rm -f "$build"/ddprun_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/ddprun_*.deb)
echo "package-check: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --field "$deb" Package Version Architecture Depends Suggests Section
dpkg-deb --contents "$deb" | awk '{print $NF}'

removed=0
remove() { [ "$removed" = 1 ] || apt-get remove -y -q ddprun >/dev/null; removed=1; }
trap remove EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "./$deb" >/dev/null
test "$(command -v ddprun)" = /usr/bin/ddprun
ddprun --version
man -w ddprun
test -f /usr/share/bash-completion/completions/ddprun
test -f /usr/share/zsh/vendor-completions/_ddprun
bash -c 'source /usr/share/bash-completion/completions/ddprun && complete -p ddprun'
remove
if [ -e /usr/bin/ddprun ] || [ -e /usr/share/man/man1/ddprun.1 ]; then
  echo "package-check: FAIL: ddprun's files are still there after apt-get remove" >&2
  exit 1
fi
echo "package-check: .deb installed, ran and removed cleanly"

if [ "${1:-}" != "--deb-only" ]; then
  JOBS=$jobs bash scripts/relocatable.sh
fi
