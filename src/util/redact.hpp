// Internal: the one redaction helper. Every string that reaches a caller from a server passes
// through it once, where it is first read, so no token leaves the library.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "clef/decision.hpp"
#include "clef/error.hpp"
#include "clef/transport.hpp"

namespace clef::detail {

inline constexpr std::string_view redacted_placeholder = "<redacted>";

/// `text` with every occurrence of `secret` replaced by "<redacted>". One left-to-right pass
/// over the input: it terminates whatever the secret (even one the placeholder contains) and
/// never looks at what it wrote. An empty secret returns `text` as it is.
std::string redact(std::string_view text, std::string_view secret);

/// Every secret a client holds — its API token or the URL's password, and AI Gateway's own
/// token when it is another — each scrubbed from whatever a server says. Made from one secret
/// where only one is known.
class Secrets {
 public:
  Secrets() = default;
  Secrets(std::string_view secret) { add(secret); }    // NOLINT: one secret is a set of one
  Secrets(const std::string& secret) { add(secret); }  // NOLINT
  Secrets(const char* secret) { add(secret); }         // NOLINT
  /// Adds `secret` unless it is empty or already held; the longest are redacted first, so a
  /// secret inside another never leaves the longer one's tail behind.
  void add(std::string_view secret);
  bool empty() const noexcept { return m_secrets.empty(); }

 private:
  friend std::string redact_all(std::string_view text, const Secrets& secrets);
  std::vector<std::string> m_secrets;
};

/// Adds "user:password" (basic authentication's credentials), the password alone, and each one's
/// base64 with and without its padding: the forms a server echoing the header may show them in.
void add_basic_credentials(std::string_view user_and_password, Secrets& out);

/// `text` with each of `secrets` redacted, longest first.
std::string redact_all(std::string_view text, const Secrets& secrets);

/// Every credential `request` carries, as a server may echo it back: each credential header's
/// value (a name holding authorization, key, token or secret: Authorization, AI Gateway's
/// cf-aig-authorization, X-Api-Key…) with and without its scheme, and a URL's userinfo and
/// password. What the cassette and the cache scrub from what they keep.
Secrets request_credentials(const HttpRequest& request);

/// Redacts every text field of a decision that came from the server.
void redact_decision(Decision& decision, const Secrets& secret);

}  // namespace clef::detail
