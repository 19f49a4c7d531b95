#!/usr/bin/env bash
# Builds the ddprun wheel, offline: dist/ddprun-<version>-py3-none-<platform>.whl. It carries the
# binary as a script (pip puts it on the environment's PATH, bin/ddprun) and a `ddprun` package
# whose __main__ execs it (`python -m ddprun ...`).
#   bash scripts/wheel.sh                   relocatable Release build of the ddprun target into
#                                           BUILD_DIR (build-reloc) with JOBS (1) jobs, for releases
#   bash scripts/wheel.sh --binary PATH     package an already built ddprun instead (the tests)
#   --out DIR                               where the wheel goes (default dist)
# The platform tag is manylinux_2_<N>_<arch>, N the newest GLIBC_ symbol version the binary needs
# (objdump -T), when it needs no library beyond glibc's; otherwise (a build-tree binary linked
# to libfmt, libspdlog, the sanitizers' runtimes) it is linux_<arch>: installable on this kind of
# machine only. The last line printed is the wheel's path.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/relocatable-lib.sh

needs_value() {
  echo "wheel: $1 needs a value (usage: scripts/wheel.sh [--binary PATH] [--out DIR])" >&2
  exit 2
}
binary="" out=dist
while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || needs_value "$1"; binary=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || needs_value "$1"; out=$2; shift 2 ;;
    *) echo "wheel: unknown argument '$1': expected --binary PATH or --out DIR" >&2; exit 2 ;;
  esac
done

if [ -z "$binary" ]; then
  build=${BUILD_DIR:-build-reloc}
  reloc_build "$build" "${JOBS:-1}" ddprun >&2
  binary="$build/src/ddprun"
fi
if [ ! -f "$binary" ] || [ ! -x "$binary" ]; then
  echo "wheel: --binary '$binary': expected an executable ddprun file" >&2
  exit 2
fi

arch=$(uname -m)
foreign=$(elf_foreign_needed "$binary")
if [ -z "$foreign" ] && ! elf_has_rpath "$binary"; then
  platform="manylinux_$(elf_newest_glibc "$binary" | tr . _)_$arch"
else
  platform="linux_$arch"
  echo "wheel: $binary needs $(xargs <<<"$foreign") beyond glibc (or has an RPATH): tag $platform" >&2
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
strip --strip-unneeded -o "$stage/ddprun" "$binary"
mkdir -p "$out"
python3 packaging/wheel/make_wheel.py --binary "$stage/ddprun" --version "$(project_version)" \
  --platform "$platform" --package packaging/wheel/ddprun --license LICENSE --out "$out"
