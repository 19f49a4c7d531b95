#!/usr/bin/env bash
# Builds the relocatable ddprun (-DDDPRUN_RELOCATABLE=ON: static libstdc++/libgcc, header-only
# fmt/spdlog) into build-reloc, checks with readelf that the binary NEEDs nothing beyond glibc,
# and that it needs no glibc symbol newer than GLIBC_2.28 (objdump -T), runs it with an empty
# environment, and packs ddprun-<version>-linux-<arch>.tar.gz (bin, man page, completions, docs,
# LICENSE) in OUT_DIR (the repository root).
#   BUILD_DIR=build-reloc OUT_DIR=. JOBS=1 bash scripts/relocatable.sh
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/relocatable-lib.sh
build=${BUILD_DIR:-build-reloc}
jobs=${JOBS:-1}
out=${OUT_DIR:-.}

reloc_build "$build" "$jobs" ddprun ddprun_docs ddprun_glibc_probe
bin="$build/src/ddprun"

echo "relocatable: NEEDED: $(elf_needed "$bin" | xargs)"
bad=$(elf_foreign_needed "$bin")
if [ -n "$bad" ]; then
  echo "relocatable: FAIL: $bin needs non-glibc libraries: $(xargs <<<"$bad")" >&2
  exit 1
fi
if elf_has_rpath "$bin"; then
  echo "relocatable: FAIL: $bin carries an RPATH/RUNPATH" >&2
  exit 1
fi
newest=$(elf_newest_glibc "$bin")
echo "relocatable: newest glibc symbol version required: GLIBC_$newest"
if [ "$(printf '%s\n%s\n' "$newest" "$reloc_glibc_max" | sort -V | tail -1)" != "$reloc_glibc_max" ]; then
  echo "relocatable: FAIL: $bin needs GLIBC_$newest, newer than GLIBC_$reloc_glibc_max" >&2
  exit 1
fi

env -i "$bin" --version
env -i "$bin" --help >/dev/null
env -i PATH=/usr/bin:/bin "$bin" --standalone --nproc-per-node 2 --no-python /bin/true
echo "relocatable: ran a 2-worker job with an empty environment"

version=$(project_version)
name="ddprun-$version-linux-$(uname -m)"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage/$name" --strip >/dev/null
mkdir -p "$out"
tar -C "$stage" -czf "$out/$name.tar.gz" --owner=0 --group=0 "$name"
echo "relocatable: $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)), contents:"
tar -tzf "$out/$name.tar.gz"
