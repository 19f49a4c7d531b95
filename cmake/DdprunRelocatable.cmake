# DDPRUN_RELOCATABLE: one ddprun binary that runs on any x86_64 Linux with the same or a newer
# glibc. libstdc++ and libgcc are linked statically; fmt and spdlog, which Debian ships only as
# shared libraries, are compiled in header-only mode (FMT_HEADER_ONLY, spdlog without
# SPDLOG_COMPILED_LIB); Boost is header-only already (Asio). The binary then NEEDs only glibc's
# libraries, which scripts/relocatable.sh checks with readelf.
#
# Included instead of find_package(fmt) / find_package(spdlog): it defines fmt::fmt and
# spdlog::spdlog as header-only interface targets, so the modules' target_link_libraries lines
# stay the same in both builds.

find_path(DDPRUN_FMT_INCLUDE_DIR fmt/format-inl.h REQUIRED)
find_path(DDPRUN_SPDLOG_INCLUDE_DIR spdlog/logger-inl.h REQUIRED)

add_library(fmt::fmt INTERFACE IMPORTED)
set_target_properties(fmt::fmt PROPERTIES
  INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1"
  INTERFACE_INCLUDE_DIRECTORIES "${DDPRUN_FMT_INCLUDE_DIR}")

add_library(spdlog::spdlog INTERFACE IMPORTED)
set_target_properties(spdlog::spdlog PROPERTIES
  INTERFACE_COMPILE_DEFINITIONS "SPDLOG_FMT_EXTERNAL"
  INTERFACE_INCLUDE_DIRECTORIES "${DDPRUN_SPDLOG_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "fmt::fmt;Threads::Threads")

# Called on the ddprun executable once it exists.
function(ddprun_make_relocatable target)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
endfunction()
