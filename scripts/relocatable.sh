#!/usr/bin/env bash
# Builds the relocatable ddprun (-DDDPRUN_RELOCATABLE=ON: static libstdc++/libgcc, header-only
# fmt/spdlog) into build-reloc, checks with readelf that the binary NEEDs nothing beyond glibc,
# runs it with an empty environment, and packs ddprun-<version>-linux-<arch>.tar.gz (bin, man
# page, completions, docs, LICENSE) in the repository root.
#   BUILD_DIR=build-reloc JOBS=1 bash scripts/relocatable.sh
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/relocatable-lib.sh
build=${BUILD_DIR:-build-reloc}
jobs=${JOBS:-1}

reloc_build "$build" "$jobs" ddprun ddprun_docs
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
echo "relocatable: newest glibc symbol version required: GLIBC_$(elf_newest_glibc "$bin")"

env -i "$bin" --version
env -i "$bin" --help >/dev/null
env -i PATH=/usr/bin:/bin "$bin" --standalone --nproc-per-node 2 --no-python /bin/true
echo "relocatable: ran a 2-worker job with an empty environment"

version=$(project_version)
name="ddprun-$version-linux-$(uname -m)"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage/$name" --strip >/dev/null
tar -C "$stage" -czf "$name.tar.gz" --owner=0 --group=0 "$name"
echo "relocatable: $name.tar.gz ($(du -h "$name.tar.gz" | cut -f1)), contents:"
tar -tzf "$name.tar.gz"
