// Linked into every test executable: before any test runs, the process drops every environment
// variable clef (or libcurl under it) reads, so a developer's exported CLEF_CACHE_DIR,
// https_proxy or OLLAMA_HOST can neither fail a test nor make one pass, and child processes
// inherit the same clean slate. A test that needs one sets it itself and restores it.
#include <cstdlib>

namespace {

constexpr const char* variables_clef_reads[] = {
    // Where to connect, and with what.
    "OLLAMA_HOST", "CLOUDFLARE_API_TOKEN", "CLOUDFLARE_ACCOUNT_ID", "CLEF_API_KEY",
    // The cache.
    "CLEF_CACHE_DIR",
    // Proxies, as clef and libcurl read them.
    "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy",
    "NO_PROXY",
    // Trust: which CA bundle wins.
    "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_HOME", "SSLKEYLOGFILE",
    // The terminal: colour and progress.
    "NO_COLOR", "TERM", "COLUMNS"};

[[maybe_unused]] const bool cleared = [] {
  for (const char* name : variables_clef_reads) ::unsetenv(name);
  // Scratch files (clef eval's, without --answers) go under this build tree's test directory.
  if (const char* test_tmpdir = std::getenv("TEST_TMPDIR"))
    ::setenv("TMPDIR", test_tmpdir, 1);
  else
    ::unsetenv("TMPDIR");
  return true;
}();

}  // namespace
