# -DCLEF_DEB=ON: the build debian/rules configures (dh_auto_configure passes the prefix, the
# multiarch libdir and Debian's compiler flags). Builds only what the packages hold, and links
# clef and clef-mock to libclef.so (BUILD_SHARED_LIBS) instead of to a copy of the library.
# Included before the options, so that their defaults see this.
foreach(part TESTS EXAMPLES BENCH)
  set(CLEF_BUILD_${part} OFF CACHE BOOL "Not in the Debian packages")
endforeach()
set(BUILD_SHARED_LIBS ON CACHE BOOL "clef and clef-mock link libclef.so")
