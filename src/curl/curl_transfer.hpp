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

class CurlTransfer {
 public:
  CurlTransfer() = default;
  CurlTransfer(const CurlTransfer&) = delete;
  CurlTransfer& operator=(const CurlTransfer&) = delete;
  ~CurlTransfer();

  /// Who ends the transfer when the request is cancelled: curl itself, asking at each progress
  /// call (curl_easy_perform, which nothing else can interrupt), or the caller (an event loop
  /// that removes the handle, and spares curl a callback per read).
  enum class CancelledBy { curl, caller };

  /// Resets `handle` (its connection stays cached) and sets every option for `request`, which
  /// must outlive the transfer (curl reads the body from it). This object must not move until
  /// finish(): the callbacks write into it.
  void prepare(CURL* handle, const HttpRequest& request, CancelledBy cancelled_by);
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
  curl_slist* m_headers = nullptr;
  std::optional<ProxyRoute> m_proxy;
  char m_detail[CURL_ERROR_SIZE] = {0};
};

}  // namespace clef::detail
