// Internal: the one check of ClientOptions that every API object built from them makes.
#pragma once

#include <string>

#include "clef/options.hpp"
#include "clef/result.hpp"

namespace clef::detail {

/// Checks the URL, credentials, timeouts and CA file of `options` and returns the API root
/// requests go under: OLLAMA_HOST's URL for an empty Ollama base, Cloudflare's API root for
/// Workers AI, no trailing '/'.
Result<std::string> checked_api_root(const ClientOptions& options);

/// "clef/<version>", the User-Agent of every request clef sends.
std::string user_agent();

}  // namespace clef::detail
