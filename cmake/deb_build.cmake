# -DCLEF_DEB=ON: the build debian/rules configures (dh_auto_configure passes the prefix, the
# multiarch libdir and Debian's compiler flags). Builds only what the packages hold, and links
# clef and clef-mock to libclef.so (BUILD_SHARED_LIBS) instead of to a copy of the library.
# Included before the options, so that their defaults see this.
foreach(part TESTS EXAMPLES BENCH)
  set(CLEF_BUILD_${part} OFF CACHE BOOL "Not in the Debian packages")
endforeach()
set(BUILD_SHARED_LIBS ON CACHE BOOL "clef and clef-mock link libclef.so")
# Sixteen sources a compilation unit, as the sanitizer builds in .ci/run: with -O2 -g, 192
# compilations that each parse nlohmann/json, CLI11 and libcurl's headers took the packages'
# build 9 minutes on two cores. The objects are the same code; only how many files a
# compiler run reads changes.
set(CMAKE_UNITY_BUILD ON CACHE BOOL "The packages' build compiles sixteen sources a unit")
set(CMAKE_UNITY_BUILD_BATCH_SIZE 16 CACHE STRING "Sources a unity unit")
