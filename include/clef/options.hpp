// clef: everything a Client can be told — where to connect, how to retry, how strictly to read.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "clef/async_transport.hpp"
#include "clef/backend.hpp"
#include "clef/cost.hpp"
#include "clef/export.hpp"
#include "clef/transport.hpp"

namespace clef {

/// When and how often a failed request is sent again. Only retryable errors are retried
/// (Error::retryable): never a 4xx that retrying cannot fix. The client and the batch engine
/// both wait by this one policy.
struct RetryPolicy {
  int max_attempts = 3;  ///< Including the first; 1 disables retries.
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{5'000};
  /// No retry starts once this much time has passed since the first attempt.
  std::chrono::milliseconds total_budget{30'000};
  bool jitter = true;  ///< Full jitter: wait a random time in [backoff/2, backoff].
  /// The longest Retry-After clef waits out. A server asking for more (an hour, 9e9 s) gets
  /// no retry: the error comes back at once with Error::retry_after set, for the caller to
  /// schedule (clef batch pauses for this cap and tries again within its throttle budget).
  std::chrono::milliseconds max_retry_after{60'000};
  /// Retry 429s and 503s (the server asking for less traffic) like other retryable errors.
  /// run_batch turns this off for its own calls: it pauses every worker instead, since one
  /// worker waiting alone while the others go on sending only meets the limit again.
  bool retry_throttling = true;
};

/// Where P(true) turns into a verdict: yes at or above `yes_at_least`, no at or below
/// `no_at_most`, unknown between.
struct VerdictThresholds {
  double yes_at_least = 0.7;
  double no_at_most = 0.3;
};

/// Probability checks applied to every answer (see Decision).
struct ValidationOptions {
  /// Sums within this of 1 are accepted as they are (1e-3, the strictest peer's figure).
  double sum_tolerance = 1e-3;
  /// Sums further off but within this are rounding: rescaled, and Answer::renormalized set.
  double renormalize_tolerance = 0.05;
  VerdictThresholds verdict;
  /// An answer the server says another model gave ("model": "other" when clef-flash was asked)
  /// is invalid, naming both. The forms servers report are the same model: a tag left out or
  /// "latest" (clef-flash:latest), Workers AI's bare name for @cf/…/NAME, a family alias's
  /// version (jev-latest → jev-1.13.0). false takes any model: llama.cpp ignores the name asked
  /// for and reports its own file's.
  bool require_asked_model = true;
};

/// A cf-aig-metadata value: AI Gateway takes a string, a number or a boolean.
using GatewayMetadataValue = std::variant<std::string, long long, double, bool>;

/// Cloudflare AI Gateway in front of Workers AI. With a gateway, a decision goes to
/// {base}/{account}/{id}/workers-ai/@cf/cloudflare/MODEL (base: ai_gateway_default_base_url
/// unless ClientOptions::base_url says otherwise); a base_url that already ends in
/// "/workers-ai" is such a gateway URL, and `id` stays empty. The cf-aig-* headers below are
/// sent only through a gateway: Client::create refuses them without one.
struct AiGatewayOptions {
  std::string id;  ///< The gateway's name (letters, digits, - and _).
  std::optional<std::chrono::seconds> cache_ttl;  ///< cf-aig-cache-ttl: cache this answer.
  bool skip_cache = false;                        ///< cf-aig-skip-cache: true.
  /// false: cf-aig-collect-log-payload: false — the gateway logs usage, not the request and
  /// response bodies (private tickets).
  bool collect_log_payload = true;
  /// cf-aig-metadata, in order. The gateway keeps 5 entries and silently drops the rest, so
  /// Client::create refuses more (max_gateway_metadata) instead of losing them.
  std::vector<std::pair<std::string, GatewayMetadataValue>> metadata;
  /// An Authenticated Gateway's token (every gateway made since 2026-11-03 is one), sent as
  /// cf-aig-authorization: Bearer TOKEN and redacted like the API token. Empty: the Workers AI
  /// token goes there too, as one Cloudflare API token with the gateway's Run permission serves
  /// both. ClientOptions::from_environment reads CF_AIG_TOKEN. Unused without a gateway.
  std::string token;
};

/// The environment variable ClientOptions::from_environment reads AI Gateway's token from.
inline constexpr const char* ai_gateway_token_variable = "CF_AIG_TOKEN";

inline constexpr const char* ai_gateway_default_base_url = "https://gateway.ai.cloudflare.com/v1";

/// Whether `base_url` is already an AI Gateway's Workers AI root (".../workers-ai", trailing
/// slashes aside), which holds the account and the gateway itself.
CLEF_API bool is_ai_gateway_url(std::string_view base_url);
inline constexpr std::size_t max_gateway_metadata = 5;

struct CLEF_API ClientOptions {
  Backend backend = Backend::ollama;
  /// Ollama: empty reads OLLAMA_HOST as Ollama does, but refuses (Client::create's error names
  /// it) a value Ollama would quietly replace with 127.0.0.1:11434 (read_ollama_host). Workers
  /// AI: empty is Cloudflare's API
  /// (workers_ai_default_base_url; "/client/v4" is added when missing). systemone: required,
  /// e.g. "http://localhost:8000".
  std::string base_url;
  std::string account_id;    ///< Workers AI only (not needed with a gateway URL, which holds it).
  AiGatewayOptions gateway;  ///< Workers AI only: through Cloudflare AI Gateway.
  std::string api_token;     ///< Workers AI (required) or systemone (optional). Never logged.
  /// A client that never reaches a live server: a dry run (request_body, endpoint) or a
  /// transport that answers from a cassette. Workers AI's token is then not required, since
  /// nothing that needs it is sent; a request that does reach a server goes without one, and the
  /// server's 401 says so. Every other check is the same.
  bool offline = false;
  /// Used when a request names none. For Workers AI an Ollama-style tag is dropped:
  /// "clef-flash:latest" runs "@cf/cloudflare/clef-flash".
  std::string model = "clef-flash";

  /// Both timeouts must lie in [1 ms, 1 day]; Client::create refuses others.
  std::chrono::milliseconds connect_timeout{10'000};
  /// Per attempt. Generous by default: a cold Ollama model load takes many seconds.
  std::chrono::milliseconds request_timeout{120'000};
  /// A PEM file of CA certificates to trust for HTTPS, in addition to the system's (a private
  /// CA, a TLS-inspecting proxy). Verification itself can never be turned off.
  std::string ca_file;
  std::size_t max_response_bytes = 16u * 1024u * 1024u;
  /// Unset: the environment's proxy, never for a loopback host (see HttpRequest::proxy).
  /// "": none. A URL: that proxy for every request, loopback hosts included.
  std::optional<std::string> proxy;
  RetryPolicy retry;
  ValidationOptions validation;
  /// Prices by model name (as sent, or without its provider's path: "clef-flash"), in dollars
  /// per million tokens: they replace the built-in table's row (cost.hpp) for a decision whose
  /// server measured nothing. `clef --price MODEL=INPUT[,OUTPUT]`.
  std::map<std::string, Price> prices;

  /// Empty: libcurl (make_curl_transport). Tests pass their own.
  std::shared_ptr<Transport> transport;
  /// What Client::submit, decide_async, run_batch and decide_all run on. Empty: a curl loop of
  /// one thread (make_curl_loop), made on the first submit — or, when `transport` is set, that
  /// transport on a pool of up to 256 threads (make_async_transport), so a test's transport or
  /// a decorator chain serves both paths.
  std::shared_ptr<AsyncTransport> async_transport;
  /// How decide() waits between retries; tests pass a fake that records the delays. submit(),
  /// decide_async() and the batch engine wait on their transport's timers instead.
  std::function<void(std::chrono::milliseconds)> sleep;
  /// Stops in-flight and pending calls with ErrorKind::cancelled when it turns true.
  const std::atomic<bool>* cancel = nullptr;

  /// Options for `backend` with credentials and host read from the environment:
  /// OLLAMA_HOST, CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_API_TOKEN, CLEF_API_KEY (systemone), and
  /// the CA bundle from CURL_CA_BUNDLE, else SSL_CERT_FILE. An OLLAMA_HOST that cannot be read
  /// leaves base_url empty, so Client::create refuses it naming the variable.
  static ClientOptions from_environment(Backend backend);
};

}  // namespace clef
