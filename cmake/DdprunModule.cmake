# ddprun_module(name SOURCES ... DEPS ...): one static library per module.
function(ddprun_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(ddprun_${name} STATIC ${M_SOURCES})
  target_include_directories(ddprun_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(ddprun_${name} PUBLIC ${M_DEPS} ddprun_sanitizers
    PRIVATE ddprun_warnings)
endfunction()
