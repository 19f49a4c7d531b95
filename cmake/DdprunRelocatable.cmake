# DDPRUN_RELOCATABLE: one ddprun binary that runs on any x86_64 Linux with glibc
# DDPRUN_GLIBC_MAX (2.28) or newer. libstdc++, libgcc and OpenSSL are linked statically; fmt and spdlog, which Debian ships only as
# shared libraries, are compiled in header-only mode (FMT_HEADER_ONLY, spdlog without
# SPDLOG_COMPILED_LIB); Boost is header-only already (Asio). The binary then NEEDs only glibc's
# libraries, which scripts/relocatable.sh checks with readelf. glibc stays dynamic (NSS: hostnames
# from /etc/hosts, DNS, the scheduler's names), linked against stubs that carry only versions up to
# DDPRUN_GLIBC_MAX (packaging/glibc-compat/make_stubs.py), with the few newer functions defined in
# the binary (shims.cpp) and an entry point that runs the constructors on old glibc (entry.cpp).
# packaging/README.md says why.
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

set(DDPRUN_GLIBC_MAX "2.28" CACHE STRING "Newest glibc symbol version the relocatable ddprun may need")
set(DDPRUN_GLIBC_COMPAT_DIR ${PROJECT_SOURCE_DIR}/packaging/glibc-compat)
# glibc's libraries whose stubs the link sees; libpthread, libdl and librt stay NEEDED because
# glibc < 2.34 defines pthread_*, dl* and the timers there.
set(DDPRUN_GLIBC_LIBS libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 ld-linux-x86-64.so.2)

find_package(Python3 REQUIRED COMPONENTS Interpreter)

# ddprun_real_glibc(OUT): the paths of the build machine's glibc libraries, as the compiler finds them.
function(ddprun_real_glibc out)
  set(paths "")
  foreach(lib IN LISTS DDPRUN_GLIBC_LIBS ITEMS libc_nonshared.a)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${lib}
      OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT IS_ABSOLUTE "${path}" OR NOT EXISTS "${path}")
      message(FATAL_ERROR "DDPRUN_RELOCATABLE: ${CMAKE_CXX_COMPILER} does not find ${lib}")
    endif()
    get_filename_component(path "${path}" REALPATH)
    list(APPEND paths "${path}")
  endforeach()
  set(${out} "${paths}" PARENT_SCOPE)
endfunction()

# ddprun_glibc_stubs: the stub libraries in <build>/glibc-stubs (made once, for every target).
function(ddprun_glibc_stubs_target dir)
  ddprun_real_glibc(real)
  list(POP_BACK real nonshared)
  add_custom_command(OUTPUT ${dir}/libc.so ${dir}/libc.so.6.stub
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${dir}
    COMMAND ${Python3_EXECUTABLE} ${DDPRUN_GLIBC_COMPAT_DIR}/make_stubs.py --max ${DDPRUN_GLIBC_MAX}
      --out ${dir} --cc ${CMAKE_CXX_COMPILER} --nonshared ${nonshared} ${real}
    DEPENDS ${DDPRUN_GLIBC_COMPAT_DIR}/make_stubs.py ${real}
    COMMENT "glibc stubs at GLIBC_${DDPRUN_GLIBC_MAX}" VERBATIM)
  add_custom_target(ddprun_glibc_stubs DEPENDS ${dir}/libc.so ${dir}/libc.so.6.stub)
endfunction()

# ddprun_link_old_glibc(TARGET): TARGET links against the stubs (first in the search path; the
# libc.so linker script there names the stub libc) and carries the shims and the entry point.
function(ddprun_link_old_glibc target)
  set(dir ${CMAKE_BINARY_DIR}/glibc-stubs)
  if(NOT TARGET ddprun_glibc_stubs)
    ddprun_glibc_stubs_target(${dir})
  endif()
  add_dependencies(${target} ddprun_glibc_stubs)
  target_sources(${target} PRIVATE ${DDPRUN_GLIBC_COMPAT_DIR}/entry.cpp
    ${DDPRUN_GLIBC_COMPAT_DIR}/shims.cpp)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc -L${dir}
    -Wl,--entry=ddprun_compat_start)
  target_link_libraries(${target} PRIVATE -Wl,--no-as-needed pthread dl rt -Wl,--as-needed)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${dir}/libc.so.6.stub)
endfunction()

# Called on the ddprun executable once it exists. ddprun_glibc_probe (tests/package) is linked
# the same way: the package tests run it on this machine and in the Debian 11 root. Not installed.
function(ddprun_make_relocatable target)
  ddprun_link_old_glibc(${target})
  add_executable(ddprun_glibc_probe ${PROJECT_SOURCE_DIR}/tests/package/glibc_probe.cpp)
  target_link_libraries(ddprun_glibc_probe PRIVATE Threads::Threads)
  set_target_properties(ddprun_glibc_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  ddprun_link_old_glibc(ddprun_glibc_probe)
endfunction()
