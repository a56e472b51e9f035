# Compiles through ccache when it is installed (make deps installs it), so a rebuild of a checkout
# (a clean build tree, `make clean`, a second clone at the same path) recompiles only what
# changed. The cache is ccache's own (~/.cache/ccache),
# outside the repository like the built tools. BASEDIR and NOHASHDIR let two checkouts at
# different paths share objects (paths under the source tree are hashed relative to it; debug
# info then names the first checkout's folder). The unity build's batch files
# (cmake/UnityBuild.cmake) name their sources by absolute path, so a batch is shared only between
# checkouts at the same path. DISTTRAIN_CCACHE=OFF compiles without it.
option(DISTTRAIN_CCACHE "Compile through ccache when it is found" ON)
find_program(DISTTRAIN_CCACHE_PROGRAM ccache)
if(DISTTRAIN_CCACHE AND DISTTRAIN_CCACHE_PROGRAM)
  set(disttrain_ccache_launcher
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1
      CCACHE_MAXSIZE=20G ${DISTTRAIN_CCACHE_PROGRAM})
  # C++ only: the few CUDA files of `make cuda` compile as before.
  if(NOT DEFINED CMAKE_CXX_COMPILER_LAUNCHER)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${disttrain_ccache_launcher})
  endif()
endif()
