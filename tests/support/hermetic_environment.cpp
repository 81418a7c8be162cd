// Linked into every test executable: before any test runs, the process drops every environment
// variable clef (or libcurl under it) reads, so a developer's exported CLEF_CACHE_DIR,
// https_proxy or OLLAMA_HOST can neither fail a test nor make one pass, and child processes
// inherit the same clean slate. A test that needs one sets it itself and restores it.
#include <cstdlib>
#include <sstream>
#include <string>

namespace {

#ifndef CLEF_HERMETIC_VARIABLES
#error "tests/CMakeLists.txt defines CLEF_HERMETIC_VARIABLES, its one list of the variables"
#endif

[[maybe_unused]] const bool cleared = [] {
  std::istringstream names(CLEF_HERMETIC_VARIABLES);
  for (std::string name; names >> name;) ::unsetenv(name.c_str());
  // No config file but the one a test writes: not the developer's ~/.config/clef/config.toml.
  const char* scratch = std::getenv("TEST_TMPDIR");
  ::setenv("XDG_CONFIG_HOME",
           (std::string(scratch ? scratch : "/nonexistent") + "/no-config-home").c_str(), 1);
  // Scratch files (clef eval's, without --answers) go under this build tree's test directory.
  if (const char* test_tmpdir = std::getenv("TEST_TMPDIR"))
    ::setenv("TMPDIR", test_tmpdir, 1);
  else
    ::unsetenv("TMPDIR");
  return true;
}();

}  // namespace
