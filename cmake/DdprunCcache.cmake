# Compiles through ccache when it is installed. base_dir is the checkout, so paths are hashed
# relative to it and a clone in another folder hits the same cache; the build directory is not
# hashed (debug info then names the first clone's directory, which nothing reads).
option(DDPRUN_CCACHE "Compile through ccache when it is installed" ON)
if(DDPRUN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(DDPRUN_CCACHE_EXE ccache)
  if(DDPRUN_CCACHE_EXE)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
      CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1 ${DDPRUN_CCACHE_EXE})
  endif()
endif()
