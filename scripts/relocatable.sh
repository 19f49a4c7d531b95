#!/usr/bin/env bash
# Builds the relocatable ddprun (-DDDPRUN_RELOCATABLE=ON: static libstdc++/libgcc, header-only
# fmt/spdlog) into build-reloc, checks with readelf that the binary NEEDs nothing beyond glibc,
# runs it with an empty environment, and packs ddprun-<version>-linux-<arch>.tar.gz (bin, man
# page, completions, docs, LICENSE) in the repository root.
#   BUILD_DIR=build-reloc JOBS=1 bash scripts/relocatable.sh
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build-reloc}
jobs=${JOBS:-1}
# glibc's own libraries: the only ones a relocatable binary may need.
allowed='^(libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1)$'

# WERROR off: g++ 12 at -O3 gives false -Wrestrict positives inside libstdc++ (GCC bug 105329).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDDPRUN_RELOCATABLE=ON -DDDPRUN_WERROR=OFF \
  -DDDPRUN_TESTS=OFF >/dev/null
ninja -C "$build" -j"$jobs" ddprun ddprun_docs
bin="$build/src/ddprun"

needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "relocatable: NEEDED: $(echo $needed)"
bad=$(grep -Ev "$allowed" <<<"$needed" || true)
if [ -n "$bad" ]; then
  echo "relocatable: FAIL: $bin needs non-glibc libraries: $(echo $bad)" >&2
  exit 1
fi
if readelf -d "$bin" | grep -Eq '\((RPATH|RUNPATH)\)'; then
  echo "relocatable: FAIL: $bin carries an RPATH/RUNPATH" >&2
  exit 1
fi
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -u -V | tail -1)
echo "relocatable: newest glibc symbol version required: $glibc"

env -i "$bin" --version
env -i "$bin" --help >/dev/null
env -i PATH=/usr/bin:/bin "$bin" --standalone --nproc-per-node 2 --no-python /bin/true
echo "relocatable: ran a 2-worker job with an empty environment"

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
name="ddprun-$version-linux-$(uname -m)"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage/$name" --strip >/dev/null
tar -C "$stage" -czf "$name.tar.gz" --owner=0 --group=0 "$name"
echo "relocatable: $name.tar.gz ($(du -h "$name.tar.gz" | cut -f1)), contents:"
tar -tzf "$name.tar.gz"
