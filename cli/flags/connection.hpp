// Flags shared by every command that talks to a server, and the client they make.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <string>
#include <vector>

#include "clef/async_transport.hpp"
#include "clef/client.hpp"
#include "common/context.hpp"
#include "common/file_roles.hpp"
#include "flags/gateway_flags.hpp"

namespace clef::cli {

struct ConnectionFlags;

/// Whether these flags send through AI Gateway: workers-ai with --gateway, or a gateway URL as
/// --host.
bool through_gateway(const ConnectionFlags& flags);

struct ConnectionFlags {
  Backend backend = Backend::ollama;
  /// --host, repeatable (batch and eval send to each; other commands take one). Empty: OLLAMA_HOST
  /// (ollama), Cloudflare's API (workers-ai).
  std::vector<std::string> hosts;
  std::string hosts_file;    ///< --hosts FILE: one base URL a line, added to --host.
  bool mixed_fleet = false;  ///< --mixed-fleet: skip the check that every host has one model.
  std::string model = "clef-flash";
  bool any_model = false;  ///< --any-model: no check of the model a server says answered.
  std::string account_id;  ///< Empty: CLOUDFLARE_ACCOUNT_ID.
  std::string api_token_file;
  std::string ca_cert;  ///< Empty: CURL_CA_BUNDLE, else SSL_CERT_FILE, else the system's only.
  std::string proxy;    ///< Empty: the environment's proxy (never for loopback hosts).
  double timeout_seconds = 120;
  double connect_timeout_seconds = 10;
  int retries = 2;
  double max_retry_after_seconds = 60;
  bool verbose = false;
  std::string record;  ///< --record FILE: append every exchange to this cassette.
  std::string replay;  ///< --replay FILE: answer from this cassette, with no network.
  std::string cache;   ///< --cache DIR (else CLEF_CACHE_DIR): answer repeats from disk.
  bool cache_images = false;
  std::string cache_salt;           ///< Set by clef eval --repeat: each repeat's own entries.
  GatewayFlags gateway;             ///< workers-ai through Cloudflare AI Gateway.
  std::vector<std::string> prices;  ///< --price MODEL=INPUT[,OUTPUT], repeatable.
  std::string price_file;           ///< --prices FILE: such lines, one a line.
  /// Set by a command that must reach the server (clef doctor): no cache, whatever --cache or
  /// CLEF_CACHE_DIR say.
  bool without_cache = false;
};

/// Adds --backend, --host, --model, --account-id, --api-token-file, --timeout,
/// --connect-timeout, --retries and --verbose to `command`.
void add_connection_flags(CLI::App& command, ConnectionFlags& flags);

/// The files these flags name that a command reads (--hosts, --api-token-file, --aig-token-file,
/// --replay, --prices, --ca-cert): none of them may be one of its outputs.
std::vector<NamedFile> connection_inputs(const ConnectionFlags& flags);

/// Builds the client options: flags first, then the environment. Tokens come only from the
/// environment (CLOUDFLARE_API_TOKEN, CLEF_API_KEY) or --api-token-file, never from argv.
/// `context` gives the cancel flag and, with --verbose, the stream each HTTP call is shown on.
Result<ClientOptions> client_options(const ConnectionFlags& flags, const Context& context);

/// The client for these flags. `offline` (dry runs) lets a missing token through, since
/// nothing is sent and the token is never printed. Its decisions run on one curl event loop,
/// with -v, --cache, --record and --replay as stages on it (no thread per request).
Result<Client> make_client(const ConnectionFlags& flags, const Context& context, bool offline);
/// make_client without the one-host check: the client for flags.hosts.front() (hosts.hpp makes
/// one per host), its decisions sent through `network` (one curl loop shared by every host) or,
/// when null, a loop of its own.
Result<Client> make_one_client(const ConnectionFlags& flags, const Context& context, bool offline,
                               std::shared_ptr<AsyncTransport> network);

}  // namespace clef::cli
