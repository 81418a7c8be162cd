// Internal: the one redaction helper. Every string that reaches a caller from a server passes
// through it once, where it is first read, so no token leaves the library.
#pragma once

#include <string>
#include <string_view>

#include "clef/decision.hpp"
#include "clef/error.hpp"

namespace clef::detail {

inline constexpr std::string_view redacted_placeholder = "<redacted>";

/// `text` with every occurrence of `secret` replaced by "<redacted>". One left-to-right pass
/// over the input: it terminates whatever the secret (even one the placeholder contains) and
/// never looks at what it wrote. An empty secret returns `text` as it is.
std::string redact(std::string_view text, std::string_view secret);

/// Redacts every text field of a decision that came from the server.
void redact_decision(Decision& decision, std::string_view secret);

}  // namespace clef::detail
