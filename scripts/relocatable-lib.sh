# shellcheck shell=bash
# Shared by scripts/relocatable.sh and scripts/wheel.sh (source it): the relocatable build and
# the ELF checks that say which systems its binary runs on.

# glibc's own libraries: the only ones a relocatable binary may need.
reloc_allowed='^(libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1)$'

# reloc_build DIR JOBS TARGET...: a Release build with DDPRUN_RELOCATABLE=ON (static
# libstdc++/libgcc, header-only fmt/spdlog) of TARGETs only, tests not configured.
# WERROR off: g++ 12 at -O3 gives false -Wrestrict positives inside libstdc++ (GCC bug 105329).
reloc_build() {
  local dir=$1 jobs=$2
  shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDDPRUN_RELOCATABLE=ON \
    -DDDPRUN_WERROR=OFF -DDDPRUN_TESTS=OFF >/dev/null
  ninja -C "$dir" -j"$jobs" "$@"
}

# elf_needed BIN: the NEEDED libraries of BIN, one a line.
elf_needed() {
  readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

# elf_foreign_needed BIN: the NEEDED libraries of BIN that are not glibc's, one a line.
elf_foreign_needed() {
  elf_needed "$1" | grep -Ev "$reloc_allowed" || true
}

# elf_has_rpath BIN: succeeds when BIN carries an RPATH or RUNPATH.
elf_has_rpath() {
  readelf -d "$1" | grep -Eq '\((RPATH|RUNPATH)\)'
}

# elf_newest_glibc BIN: the newest GLIBC_ symbol version BIN needs, e.g. "2.36".
elf_newest_glibc() {
  objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -u -V | tail -1
}

# project_version: the VERSION of project(ddprun ...) in the top-level CMakeLists.txt.
project_version() {
  sed -n 's/^project(ddprun VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt
}
