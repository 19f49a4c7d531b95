#!/usr/bin/env bash
# Debian roots for the tests that need another distribution's glibc or Python (made with
# mmdebstrap from deb.debian.org, cached outside any build tree, created once):
#   scripts/test-root.sh make NAME SUITE [PACKAGE...]   makes (or finds) the root, prints its path
#   scripts/test-root.sh run NAME [--bind DIR] [--host 'ADDR NAME'] ... CMD...
#                                                       runs CMD chrooted in the root
# Roots live in DDPRUN_ROOTS (default /var/cache/ddprun/roots)/NAME; NAME.stamp records the
# suite and packages it was made with (a root whose stamp differs is made again). Creation holds
# an flock on NAME.lock, so concurrent tests make it once; a half-made root is never used (it is
# built under NAME.tmp and replaces the old one only once made; when that fails, the old root
# is used, with a warning on stderr), and mmdebstrap is bounded by
# DDPRUN_ROOT_TIMEOUT seconds (a dead network fails instead of hanging). `run` enters private
# mount and PID namespaces (unshare): /proc, /sys, /dev, each --bind DIR (at the same path) and
# an /etc/hosts made of the machine's plus each --host line are mounted there, and every process
# CMD leaves behind is killed with the namespace, so nothing outlives a run, failed or not, and
# the cached root is not changed by one (beyond an empty etc/hosts mount point, which a minbase
# root of some suites, bullseye's, lacks).
# Exit status of `make`: 0 made or found; 3 the root cannot be made (no root privileges, no
# mmdebstrap, no route to the archive), with one line on stderr saying why; 2 bad usage.
set -euo pipefail

roots=${DDPRUN_ROOTS:-/var/cache/ddprun/roots}
mirror=${DDPRUN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
make_timeout=${DDPRUN_ROOT_TIMEOUT:-900}
lock_timeout=$((make_timeout + 60))
name_re='^[a-z0-9][a-z0-9.-]*$'

usage() {
  echo "test-root: $1 (usage: test-root.sh make NAME SUITE [PACKAGE...] | run NAME [--bind DIR]... CMD...)" >&2
  exit 2
}
cannot() {
  echo "test-root: cannot make root '$1': $2" >&2
  exit 3
}

# make_root NAME SUITE PACKAGE...: the root's path on stdout once it exists.
make_root() {
  local name=$1 suite=$2
  shift 2
  local dir="$roots/$name" stamp
  stamp="suite=$suite packages=$(printf '%s\n' "$@" | sort -u | xargs)"
  [ "$(id -u)" = 0 ] || cannot "$name" "needs root (chroot, mount)"
  command -v mmdebstrap >/dev/null || cannot "$name" "mmdebstrap is not installed (scripts/install-deps.sh)"
  mkdir -p "$roots"
  exec 9>"$roots/$name.lock"
  flock -w "$lock_timeout" 9 || cannot "$name" "$roots/$name.lock is held for over ${lock_timeout}s"
  if [ -d "$dir" ] && [ "$(cat "$roots/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$dir"
    return
  fi
  rm -rf "$dir.tmp"
  local include
  include=$(IFS=,; echo "$*")
  # Valid-Until is not checked: a testing suite's Release file on a mirror can be past it
  # (forky's was), and the roots are test fixtures, not systems kept up to date.
  if ! timeout "$make_timeout" mmdebstrap --variant=minbase ${include:+--include="$include"} \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    "$suite" "$dir.tmp" "$mirror" >"$roots/$name.log" 2>&1; then
    rm -rf "$dir.tmp"
    local why
    why="mmdebstrap $suite from $mirror failed or ran over ${make_timeout}s: $(grep -m1 -E 'E:|error' "$roots/$name.log" || tail -1 "$roots/$name.log")"
    if [ -d "$dir" ] && [ -f "$roots/$name.stamp" ]; then
      echo "test-root: warning: using the cached root '$name' ($(cat "$roots/$name.stamp")): $why" >&2
      echo "$dir"
      return
    fi
    cannot "$name" "$why"
  fi
  : >>"$dir.tmp/etc/hosts" # the mount point run_in binds the hosts file onto
  rm -rf "$dir" "$roots/$name.stamp"
  mv "$dir.tmp" "$dir"
  echo "$stamp" >"$roots/$name.stamp"
  echo "$dir"
}

# run_in NAME [--bind DIR] [--host 'ADDR NAME']... CMD...: CMD chrooted in the made root NAME.
run_in() {
  local name=$1
  shift
  local dir="$roots/$name" binds=() hosts
  [ -f "$roots/$name.stamp" ] || usage "root '$name' is not made (run: test-root.sh make $name ...)"
  hosts=$(mktemp)
  cp /etc/hosts "$hosts"
  chmod 644 "$hosts"
  while [ $# -gt 0 ] && { [ "$1" = --bind ] || [ "$1" = --host ]; }; do
    [ $# -ge 2 ] || usage "$1 needs a value"
    if [ "$1" = --bind ]; then binds+=("$(realpath "$2")"); else echo "$2" >>"$hosts"; fi
    shift 2
  done
  [ $# -gt 0 ] || usage "run needs a command"
  # exec: a signal to this script (timeout, ctest) reaches unshare, whose end kills the namespace.
  # shellcheck disable=SC2016 # expanded by the inner shell
  exec unshare --mount --propagation private --pid --fork --kill-child /bin/bash -c '
    set -e
    dir=$1 hosts=$2 nbind=$3; shift 3
    mount -t proc proc "$dir/proc"
    mount --rbind /sys "$dir/sys"
    mount --rbind /dev "$dir/dev"
    [ -e "$dir/etc/hosts" ] || : >"$dir/etc/hosts"
    mount --bind "$hosts" "$dir/etc/hosts"
    rm -f "$hosts"
    for ((i = 0; i < nbind; i++)); do
      mkdir -p "$dir$1"; mount --bind "$1" "$dir$1"; shift
    done
    exec chroot "$dir" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"
  ' run-in "$dir" "$hosts" "${#binds[@]}" "${binds[@]}" "$@"
}

[ $# -ge 2 ] || usage "expected a verb and a root name"
verb=$1 name=$2
shift 2
[[ $name =~ $name_re ]] || usage "root name '$name': expected lowercase letters, digits, '.' or '-'"
case $verb in
  make) [ $# -ge 1 ] || usage "make needs a suite"; make_root "$name" "$@" ;;
  run) run_in "$name" "$@" ;;
  *) usage "unknown verb '$verb'" ;;
esac
