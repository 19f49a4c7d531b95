# shellcheck shell=bash
# Shared by scripts/relocatable.sh and scripts/wheel.sh (source it): the relocatable build and
# the ELF checks that say which systems its binary runs on.

# glibc's own libraries: the only ones a relocatable binary may need.
reloc_allowed='^(libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1)$'

# The newest glibc symbol version the relocatable binary may need (DDPRUN_GLIBC_MAX in
# cmake/DdprunRelocatable.cmake): RHEL/Rocky 8.
reloc_glibc_max=2.28

# reloc_build DIR JOBS TARGET...: a Release build with DDPRUN_RELOCATABLE=ON (static
# libstdc++/libgcc, header-only fmt/spdlog) of TARGETs only, tests not configured.
# WERROR off: g++ 12 at -O3 gives false -Wrestrict positives inside libstdc++ (GCC bug 105329).
reloc_build() {
  local dir=$1 jobs=$2
  shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDDPRUN_RELOCATABLE=ON \
    -DDDPRUN_WERROR=OFF -DDDPRUN_TESTS=OFF -DDDPRUN_GLIBC_MAX="$reloc_glibc_max" >/dev/null
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

# elf_glibc_symbols BIN: "VERSION NAME" for each glibc symbol BIN imports, e.g. "2.2.5 fork" or
# "PRIVATE _dl_argv" (objdump -T, undefined symbols).
elf_glibc_symbols() {
  objdump -T "$1" | sed -n 's/.*\*UND\*[[:space:]]*[0-9a-f]*[[:space:]]*(\{0,1\}GLIBC_\([0-9.]*\|PRIVATE\))\{0,1\}[[:space:]]*\([^[:space:]]*\)$/\1 \2/p'
}

# elf_newest_glibc BIN: the newest GLIBC_ symbol version BIN needs, e.g. "2.28".
elf_newest_glibc() {
  elf_glibc_symbols "$1" | awk '$1 != "PRIVATE" { print $1 }' | sort -u -V | tail -1
}

# project_version: the VERSION of project(ddprun ...) in the top-level CMakeLists.txt.
project_version() {
  sed -n 's/^project(ddprun VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt
}
