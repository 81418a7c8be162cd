// clef: the HTTP seam. The client sends through this interface; tests inject their own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "clef/cancel.hpp"
#include "clef/export.hpp"
#include "clef/result.hpp"

namespace clef {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  Headers headers;
  std::string body;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{120'000};
  std::size_t max_response_bytes = 16u * 1024u * 1024u;
  /// Extra CA certificates (PEM file) to trust; empty: the system's only.
  std::string ca_file;
  /// When set and it becomes true, the transfer stops with ErrorKind::cancelled: looked at every
  /// 50 ms (the flag a signal handler can set).
  const std::atomic<bool>* cancel = nullptr;
  /// When cancelled, the transfer stops with ErrorKind::cancelled: at once on the event loop
  /// (make_curl_loop), at libcurl's next progress call in the blocking transport.
  CancelToken cancel_token;
  /// True once `cancel` or `cancel_token` says to stop.
  bool cancelled() const noexcept {
    return cancel_token.cancelled() || (cancel != nullptr && cancel->load());
  }
  /// Unset: the environment's proxy, read as curl reads it (no_proxy/NO_PROXY, then
  /// https_proxy/HTTPS_PROXY or http_proxy, then all_proxy/ALL_PROXY), except that a loopback
  /// host (localhost, 127.0.0.0/8, ::1) is always reached directly, as Go's net/http (and so
  /// Ollama's own CLI) does. "": no proxy. A URL: that proxy, for every host.
  std::optional<std::string> proxy;
};

/// A proxy a request goes through, and where it was set ("https_proxy", "the request").
struct ProxyRoute {
  std::string url;  ///< As given: may hold credentials (show url_without_credentials).
  std::string source;
};

/// The proxy the curl transport sends `request` through, or nullopt for a direct connection.
CLEF_API std::optional<ProxyRoute> proxy_route(const HttpRequest& request);

/// Any complete HTTP response, 2xx or not: statuses are data, mapped to errors by the client.
struct CLEF_API HttpResponse {
  int status = 0;
  Headers headers;  ///< Names lower-cased.
  std::string body;
  /// Answered by a CachingTransport (cache.hpp), not by the server.
  bool from_cache = false;

  /// The first value of header `name` (lower-case), or empty.
  std::string header(std::string_view name) const;
};

/// Sends one request. Fails only when no complete response arrived (connection, timeout,
/// TLS, cancellation, size cap). Implementations must be safe to call from several threads.
class CLEF_API Transport {
 public:
  virtual ~Transport() = default;
  virtual Result<HttpResponse> send(const HttpRequest& request) = 0;
};

/// The libcurl transport: keep-alive connections reused across calls (a pool of handles,
/// one per concurrent caller), TLS verification on, redirects off.
CLEF_API std::shared_ptr<Transport> make_curl_transport();

}  // namespace clef
