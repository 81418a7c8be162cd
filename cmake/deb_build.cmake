# -DCLEF_DEB=ON: a build for the Debian packages (cmake/packaging.cmake, then cpack). Installs
# under /usr (so GNUInstallDirs picks the multiarch libdir, lib/x86_64-linux-gnu), builds only
# what the packages hold, and compiles and links with Debian's own hardening flags, read from
# dpkg-buildflags as debian/rules would with hardening=+all (stack protector, _FORTIFY_SOURCE,
# PIE, RELRO, BIND_NOW); -ffile-prefix-map keeps the source directory out of the binaries.
# Included before the options and GNUInstallDirs, so that their defaults see this.
set(CMAKE_INSTALL_PREFIX /usr CACHE PATH "Install prefix" FORCE)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
foreach(part TESTS EXAMPLES BENCH)
  set(CLEF_BUILD_${part} OFF CACHE BOOL "Not in the Debian packages")
endforeach()

find_program(CLEF_DPKG_BUILDFLAGS dpkg-buildflags)
if(NOT CLEF_DPKG_BUILDFLAGS)
  message(FATAL_ERROR "CLEF_DEB needs dpkg-buildflags and dpkg-shlibdeps: apt-get install dpkg-dev file")
endif()
foreach(flag CPPFLAGS CXXFLAGS LDFLAGS)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=hardening=+all
                          ${CLEF_DPKG_BUILDFLAGS} --get ${flag}
                  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE clef_deb_${flag}
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
endforeach()
# No -g: the packages ship stripped and there is no -dbgsym package to hold the debug info.
string(REGEX REPLACE "(^| )-g( |$)" " " clef_deb_CXXFLAGS "${clef_deb_CXXFLAGS}")
set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${clef_deb_CPPFLAGS} ${clef_deb_CXXFLAGS}")
set(CMAKE_EXE_LINKER_FLAGS "${CMAKE_EXE_LINKER_FLAGS} ${clef_deb_LDFLAGS}")
set(CMAKE_SHARED_LINKER_FLAGS "${CMAKE_SHARED_LINKER_FLAGS} ${clef_deb_LDFLAGS}")
