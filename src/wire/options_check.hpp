// Internal: the one check of ClientOptions that every API object built from them makes.
#pragma once

#include <memory>
#include <string>

#include "clef/options.hpp"
#include "clef/result.hpp"
#include "clef/transport.hpp"
#include "util/redact.hpp"

namespace clef::detail {

/// Where requests go, and how they authenticate.
struct ApiRoot {
  /// OLLAMA_HOST's URL for an empty Ollama base, Cloudflare's API root for Workers AI; no
  /// trailing '/' and no "user:password@" (safe to show).
  std::string url;
  /// The Authorization header's value: "Bearer TOKEN", "Basic …" for credentials in the URL,
  /// or empty.
  std::string authorization;
  /// What to scrub from server text: the token, else the URL's password.
  std::string secret;
  /// The URL's "user:password" as written, percent-escapes and all: a server may echo it so.
  std::string userinfo_as_written;
};

/// Checks the URL, credentials, timeouts and CA file of `options` and returns the API root.
Result<ApiRoot> checked_api_root(const ClientOptions& options);

/// What every API object built from options holds: the options, the transport (libcurl's
/// unless options.transport names one), and the checked API root.
struct Connection {
  ClientOptions options;
  std::shared_ptr<Transport> transport;
  std::string base_url;
  std::string authorization;  ///< The Authorization header's value, or empty.
  Secrets secret;             ///< Scrubbed from everything the server says.
  Headers gateway_headers;    ///< AI Gateway's cf-aig-* headers, the same on every request.
};

/// The options checked (checked_api_root) and made into a Connection.
Result<Connection> connection_from(ClientOptions options);

/// "clef/<version>", the User-Agent of every request clef sends.
std::string user_agent();

/// Gives `request` what every request built from `options` carries: the connect and total
/// timeouts, the response size cap, the CA file, the proxy and the cancel flag.
void apply_transfer_options(const ClientOptions& options, HttpRequest& request);

}  // namespace clef::detail
