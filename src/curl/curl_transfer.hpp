// Internal: one HTTP exchange on one libcurl easy handle — its options, its callbacks and what
// it comes to. The blocking transport and the event loop both drive transfers through this, so
// every guarantee (TLS verification, no redirects, size caps, timeouts, cancellation, the
// proxy, the 407 and TLS messages) is written once.
#pragma once

#include <curl/curl.h>

#include <optional>
#include <string>

#include "clef/transport.hpp"

namespace clef::detail {

/// curl_global_init, once per process, before the first handle.
void curl_global_once();

/// An easy handle, kept for one request after another, and the options it holds that stay from
/// one request to the next (all but the body and a transfer's own buffers). A request that wants
/// the same ones again — every request of a batch — finds them set: curl_easy_reset and twenty
/// options per request were a tenth of the event loop's own time.
class CurlHandle {
 public:
  CurlHandle();
  CurlHandle(const CurlHandle&) = delete;
  CurlHandle& operator=(const CurlHandle&) = delete;
  ~CurlHandle();

  /// Null when curl could not make one.
  CURL* get() const { return m_handle; }

  /// What a request's standing options are made of, as they were last set.
  struct Standing {
    std::string url;
    std::string proxy;  ///< "" for a direct connection
    std::string ca_file;
    long connect_timeout_ms = 0;
    long total_timeout_ms = 0;
    std::string method;
    bool has_body = false;
    Headers headers;
    bool progress = false;  ///< Whether curl asks on_progress (cancelled by curl).
  };

 private:
  friend class CurlTransfer;

  bool stands_for(const HttpRequest& request, const std::string& proxy, bool progress) const;

  CURL* m_handle = nullptr;
  std::optional<Standing> m_standing;  ///< nullopt until set, and after a failed setopt
  curl_slist* m_headers = nullptr;     ///< Standing::headers as curl reads them
};

class CurlTransfer {
 public:
  CurlTransfer() = default;
  CurlTransfer(const CurlTransfer&) = delete;
  CurlTransfer& operator=(const CurlTransfer&) = delete;

  /// Who ends the transfer when the request is cancelled: curl itself, asking at each progress
  /// call (curl_easy_perform, which nothing else can interrupt), or the caller (an event loop
  /// that removes the handle, and spares curl a callback per read).
  enum class CancelledBy { curl, caller };

  /// Sets every option for `request` on `handle` — resetting it first (its connection stays
  /// cached) unless it holds the standing ones `request` wants already. `request` must outlive
  /// the transfer (curl reads the body from it). This object must not move until finish(): the
  /// callbacks write into it.
  void prepare(CurlHandle& handle, const HttpRequest& request, CancelledBy cancelled_by);
  /// The response, or the error, once curl ended the transfer with `code`.
  Result<HttpResponse> finish(CURL* handle, CURLcode code);

  struct Collected {
    std::string body;
    Headers headers;
    std::size_t max_bytes = 0;
    std::size_t header_bytes = 0;
    bool too_large = false;
    bool headers_too_large = false;
    const HttpRequest* request = nullptr;  ///< For its cancel flag and token.
  };

 private:
  const HttpRequest* m_request = nullptr;
  Collected m_collected;
  std::optional<ProxyRoute> m_proxy;
  char m_detail[CURL_ERROR_SIZE] = {0};
};

}  // namespace clef::detail
