# ddprun_sanitizers: sanitizer flags chosen by the DDPRUN_ASAN/UBSAN/TSAN options.
add_library(ddprun_sanitizers INTERFACE)
set(_ddprun_san "")
if(DDPRUN_ASAN)
  list(APPEND _ddprun_san address)
endif()
if(DDPRUN_UBSAN)
  list(APPEND _ddprun_san undefined)
endif()
if(DDPRUN_TSAN)
  if(DDPRUN_ASAN)
    message(FATAL_ERROR "DDPRUN_TSAN cannot be combined with DDPRUN_ASAN")
  endif()
  list(APPEND _ddprun_san thread)
endif()
if(_ddprun_san)
  list(JOIN _ddprun_san "," _ddprun_san_list)
  target_compile_options(ddprun_sanitizers INTERFACE
    -fsanitize=${_ddprun_san_list} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(ddprun_sanitizers INTERFACE -fsanitize=${_ddprun_san_list})
  if(DDPRUN_UBSAN AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # clang 14's -fsanitize=function cannot compile C++20 coroutines ("Cannot represent a
    # difference across sections"); the rest of UBSan works.
    target_compile_options(ddprun_sanitizers INTERFACE -fno-sanitize=function)
  endif()
endif()

# ddprun_module(name SOURCES ... DEPS ...): one static library per module.
function(ddprun_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(ddprun_${name} STATIC ${M_SOURCES})
  target_include_directories(ddprun_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(ddprun_${name} PUBLIC ${M_DEPS} ddprun_sanitizers
    PRIVATE ddprun_warnings)
endfunction()
