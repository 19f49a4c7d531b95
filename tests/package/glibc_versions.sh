#!/usr/bin/env bash
# Fails when the relocatable ddprun in RELOC_DIR (made by scripts/relocatable.sh) needs a glibc
# symbol version newer than MAX, a GLIBC_PRIVATE symbol, a library beyond glibc's, or carries an
# RPATH, or when the wheel scripts/wheel.sh makes of it is tagged newer than manylinux_2_<MAX>;
# then runs ddprun_glibc_probe (linked the same way: constructors once, exceptions, getaddrinfo,
# the shims) on this machine's glibc.
#   tests/package/glibc_versions.sh RELOC_DIR MAX
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/relocatable-lib.sh
dir=$1 max=$2
bin=$dir/src/ddprun
probe=$dir/ddprun_glibc_probe
fail() {
  echo "glibc_versions: FAIL: $*" >&2
  exit 1
}
[ -x "$bin" ] && [ -x "$probe" ] || fail "$bin or $probe is missing (the reloc_build test makes them)"

newer=$(elf_glibc_symbols "$bin" | awk -v max="$max" '$1 != "PRIVATE" { print }' |
  while read -r version name; do
    if [ "$(printf '%s\n%s\n' "$version" "$max" | sort -V | tail -1)" != "$max" ]; then
      echo "$name@GLIBC_$version"
    fi
  done)
[ -z "$newer" ] || fail "$bin needs symbols newer than GLIBC_$max: $(xargs <<<"$newer")"
probe_newest=$(elf_newest_glibc "$probe")
[ "$(printf '%s\n%s\n' "$probe_newest" "$max" | sort -V | tail -1)" = "$max" ] ||
  fail "$probe needs GLIBC_$probe_newest, newer than GLIBC_$max"
private=$(elf_glibc_symbols "$bin" | awk '$1 == "PRIVATE" { print $2 }')
[ -z "$private" ] || fail "$bin needs GLIBC_PRIVATE symbols: $(xargs <<<"$private")"
count=$(elf_glibc_symbols "$bin" | wc -l)
[ "$count" -gt 100 ] || fail "$bin imports only $count versioned glibc symbols: not the ddprun binary?"

foreign=$(elf_foreign_needed "$bin")
[ -z "$foreign" ] || fail "$bin needs libraries beyond glibc: $(xargs <<<"$foreign")"
! elf_has_rpath "$bin" || fail "$bin carries an RPATH/RUNPATH"
for lib in libc.so.6 libpthread.so.0 libdl.so.2; do
  elf_needed "$bin" | grep -qx "$lib" || fail "$bin does not NEED $lib (glibc < 2.34 defines its symbols there)"
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
wheel=$(bash scripts/wheel.sh --binary "$bin" --out "$out" | tail -1)
tag=$(basename "$wheel" | sed -n 's/.*-py3-none-manylinux_2_\([0-9]*\)_x86_64\.whl$/\1/p')
[ -n "$tag" ] || fail "wheel $(basename "$wheel"): expected a manylinux_2_<N>_x86_64 tag"
[ "$tag" -le "${max#2.}" ] || fail "wheel $(basename "$wheel") is tagged newer than manylinux_2_${max#2.}"
timeout 60 "$probe" localhost || fail "$probe on this machine's glibc ($(ldd --version | head -1))"
echo "glibc_versions: $count glibc symbols, newest GLIBC_$(elf_newest_glibc "$bin"), NEEDED $(elf_needed "$bin" | xargs), wheel $(basename "$wheel")"
