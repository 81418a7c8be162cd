# The Debian packages, with CPack (cd BUILD && cpack), one per install component:
#   libclef0.1   runtime      libclef.so.0.1 (the package is named after the soname)
#   libclef-dev  development  headers, libclef.so, libclef.a, CMake and .pc files
#   libclef-mock-dev  mock    the mock server library (libclef_mock.a, mock.hpp, clef-mock.pc)
#   clef         cli          clef and clef-mock, their man pages, bash/zsh/fish completions
# Each carries the copyright file and changelog Debian policy asks for. Dependencies of the
# binaries are computed by dpkg-shlibdeps; the -dev package's are what its headers, CMake config
# and .pc files name. Configure with -DCLEF_DEB=ON (cmake/deb_build.cmake) for /usr and
# Debian's hardening flags.
set(clef_runtime_package libclef${clef_soversion})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME clef)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The clef authors")
# Each package's description starts with its own summary line (below). CPackDeb prepends this
# one to them all unless it is CPack's default, so it is that default.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_NAME} built using CMake")
set(CPACK_PACKAGE_CONTACT "clef maintainers <maintainers@users.noreply.a-seed-f31a71a0.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development mock cli)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # NAME_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${clef_runtime_package})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# A shlibs file, so that what links libclef.so.0.1 gets "Depends: libclef0.1 (>= 0.1.0)", and
# dpkg's ldconfig trigger, as dh_makeshlibs adds it. (CPack also calls ldconfig from postinst
# and postrm for any library under /usr/lib, with no switch to stop it: redundant, not wrong;
# lintian warns maintscript-calls-ldconfig.)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
configure_file(${PROJECT_SOURCE_DIR}/packaging/libclef.triggers
               ${PROJECT_BINARY_DIR}/packaging/runtime/triggers COPYONLY)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/packaging/runtime/triggers)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
    "client library for the System One decision API
libclef sends a state (a ticket, a message, any JSON) and typed questions to a
decision model (Clef-Flash, Clef and others, served by Ollama, Cloudflare
Workers AI or any System One server) and returns, per question, an answer
with a probability for every option, each checked before it is trusted.

This package holds the shared library.")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libclef-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
    "${clef_runtime_package} (= ${PROJECT_VERSION}), nlohmann-json3-dev (>= 3.10), libcurl4-openssl-dev | libcurl-dev, libssl-dev")
set(CPACK_DEBIAN_DEVELOPMENT_DESCRIPTION
    "client library for the System One decision API (development files)
libclef sends a state and typed questions to a decision model and returns,
per question, a probability for every option.

This package holds the headers, libclef.so, the static libclef.a, the CMake
package (find_package(clef)) and the pkg-config file clef.pc.")

set(CPACK_DEBIAN_MOCK_PACKAGE_NAME libclef-mock-dev)
set(CPACK_DEBIAN_MOCK_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_MOCK_PACKAGE_DEPENDS
    "libclef-dev (= ${PROJECT_VERSION}), libcpp-httplib-dev, libre2-dev")
set(CPACK_DEBIAN_MOCK_DESCRIPTION
    "mock System One server for testing libclef users
clef::MockServer answers on 127.0.0.1 the way the published System One
servers do (Ollama, Workers AI and others: their envelopes, rounding, key
order and error bodies), with rules, faults and latency, for the tests of a
program that links libclef.

This package holds the static libclef_mock.a, its header clef/mock.hpp, its
CMake targets (clef::mock with find_package(clef)) and clef-mock.pc.")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME clef)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_CLI_DESCRIPTION
    "command-line client for the System One decision API
clef asks decision models typed questions about a state from the shell:
clef ask for one decision, clef batch for thousands from a file (resumable,
one output line per input line, several servers), clef eval to measure
models on labelled items, and clef mock, a local System One server for tests
and CI.

This package holds clef and clef-mock, their manual pages and bash, zsh and
fish completions.")

# Debian policy: /usr/share/doc/PACKAGE/copyright and changelog.gz in every package.
set(clef_changelog ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/packaging)
add_custom_command(OUTPUT ${clef_changelog}
                   COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/changelog > ${clef_changelog}
                   DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog)
add_custom_target(clef_changelog ALL DEPENDS ${clef_changelog})
foreach(component runtime development mock cli)
  string(TOUPPER ${component} upper)
  set(package ${CPACK_DEBIAN_${upper}_PACKAGE_NAME})
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${clef_changelog}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component})
endforeach()
# The README and the reference under docs/ (the man pages point at them: clef mock's rules, the
# exit codes in full), compressed as Debian policy asks of documentation over 4 KB.
file(GLOB clef_docs RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/docs/*.md)
set(clef_compressed_docs)
foreach(doc README.md ${clef_docs})
  set(compressed ${PROJECT_BINARY_DIR}/packaging/${doc}.gz)
  get_filename_component(compressed_dir ${compressed} DIRECTORY)
  add_custom_command(OUTPUT ${compressed}
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${compressed_dir}
                     COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/${doc} > ${compressed}
                     DEPENDS ${PROJECT_SOURCE_DIR}/${doc})
  list(APPEND clef_compressed_docs ${compressed})
endforeach()
add_custom_target(clef_compressed_docs ALL DEPENDS ${clef_compressed_docs})
install(FILES ${PROJECT_BINARY_DIR}/packaging/README.md.gz
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/clef COMPONENT cli)
# The examples the walkthroughs use (tickets, questions, rules, the scale files, the programs),
# where Debian puts examples, as they are (policy leaves examples uncompressed), none executable.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/clef/examples
        COMPONENT cli FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        PATTERN "CMakeLists.txt" EXCLUDE)
install(DIRECTORY ${PROJECT_BINARY_DIR}/packaging/docs DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/clef
        COMPONENT cli FILES_MATCHING PATTERN "*.md.gz")

include(CPack)
