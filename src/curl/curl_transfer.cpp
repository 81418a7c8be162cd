// The implementation of curl_transfer.hpp: one HTTP exchange on one libcurl easy handle — its
// options, its callbacks and what it comes to.
#include "curl/curl_transfer.hpp"

#include <unistd.h>

#include <mutex>
#include <optional>

#include "clef/backend.hpp"
#include "util/ascii.hpp"

namespace clef::detail {
namespace {

/// Response headers past this many bytes end the transfer: no real System One server sends
/// more than a few hundred, and curl's own limit (100 KiB) says nothing useful when hit.
constexpr std::size_t max_header_bytes = 64u * 1024u;

using Transfer = CurlTransfer::Collected;

/// Whether `request` sends a body (a POST always does, if empty).
bool has_body(const HttpRequest& request) {
  return request.method == "POST" || !request.body.empty();
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (transfer->body.size() + bytes > transfer->max_bytes) {
    transfer->too_large = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  transfer->body.append(data, bytes);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  transfer->header_bytes += bytes;
  if (transfer->header_bytes > max_header_bytes) {
    transfer->headers_too_large = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  // Read in place: only the name and the trimmed value are copied out.
  const std::string_view line(data, bytes);
  if (line.rfind("HTTP/", 0) == 0) {
    transfer->headers.clear();  // a new response (after 100 Continue) starts afresh
    return bytes;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  // A value of white space only is empty (it was "\r\n": the start skipped only spaces and tabs).
  const std::string_view value = detail::trimmed_space(line.substr(colon + 1));
  if (transfer->headers.empty()) transfer->headers.reserve(8);  // one allocation, not one per few
  transfer->headers.emplace_back(detail::ascii_lower(line.substr(0, colon)), std::string(value));
  return bytes;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* transfer = static_cast<Transfer*>(user);
  return transfer->request != nullptr && transfer->request->cancelled() ? 1 : 0;
}

Error not_http(const std::string& why, const std::string& where) {
  return make_error(ErrorKind::invalid_response,
                    "the server's reply is not HTTP clef can read (" + why +
                        "): the server (or a proxy in front of it) is misbehaving",
                    where);
}

/// A response that ended early or too big: past the size cap, a header line past libcurl's
/// own limit, cut short, or not HTTP; nullopt for any other failure.
std::optional<Error> response_error(CURLcode code, const std::string& why,
                                    const HttpRequest& request, const Transfer& transfer) {
  const std::string& where = request.url;
  switch (code) {
    case CURLE_WRITE_ERROR:
      if (transfer.too_large) {
        return make_error(ErrorKind::invalid_response,
                          "response larger than the " + std::to_string(request.max_response_bytes) +
                              "-byte limit",
                          where);
      }
      break;
    case CURLE_OUT_OF_MEMORY:
      // How libcurl refuses one header line past 100 KiB (its verbose log says "Avoided giant
      // realloc for header"), before clef's own cap on the headers sees its bytes: after the
      // status line came, while the headers were read.
      if (transfer.header_bytes > 0 && transfer.body.empty()) {
        return make_error(ErrorKind::invalid_response,
                          "a response header line is larger than libcurl takes (100 KiB): the "
                          "server (or a proxy in front of it) is misbehaving",
                          where);
      }
      break;
    // A server that answered, but not in HTTP: a reply that is not HTTP/1.x (HTTP/0.9, garbage).
    // Said as the server's fault, not as one that is not running.
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:
      if (code == CURLE_UNSUPPORTED_PROTOCOL && why.find("HTTP/0.9") == std::string::npos) break;
      return not_http(why, where);
    case CURLE_PARTIAL_FILE:
      return make_error(ErrorKind::connection_failed,
                        "the response was cut short after " + std::to_string(transfer.body.size()) +
                            " bytes: " + why,
                        where);
    default:
      break;
  }
  // A chunked body libcurl cannot read (a size past any, a malformed chunk), whatever its code.
  if (detail::ascii_lower(why).find("chunked") != std::string::npos) return not_http(why, where);
  return std::nullopt;
}

Error curl_error(CURLcode code, const char* detail, const HttpRequest& request,
                 const Transfer& transfer, long proxy_status) {
  const std::string why = detail[0] ? detail : curl_easy_strerror(code);
  const std::string where = request.url;
  if (proxy_status == 407) {
    Error error = make_error(
        ErrorKind::authentication,
        "the proxy refused to connect to the server without credentials (HTTP 407): put them in "
        "the proxy URL (https_proxy=http://USER:PASSWORD@PROXY:PORT) or list the server in "
        "no_proxy",
        where);
    error.http_status = 407;
    return error;
  }
  if (transfer.headers_too_large) {
    return make_error(ErrorKind::invalid_response,
                      "the response headers are larger than " +
                          std::to_string(max_header_bytes / 1024) +
                          " KiB: the server (or a proxy in front of it) is misbehaving",
                      where);
  }
  if (auto cut = response_error(code, why, request, transfer)) return *cut;
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      return make_error(ErrorKind::connection_failed, "cannot connect: " + why, where);
    case CURLE_OPERATION_TIMEDOUT:
      return make_error(ErrorKind::timeout, "no complete response in time: " + why, where);
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_USE_SSL_FAILED:
      return make_error(ErrorKind::tls,
                        "TLS failed (verification is always on; a private CA can be added with "
                        "--ca-cert or SSL_CERT_FILE): " +
                            why,
                        where);
    case CURLE_ABORTED_BY_CALLBACK:
      return make_error(ErrorKind::cancelled, "cancelled during the transfer", where);
    default:
      break;
  }
  return make_error(ErrorKind::connection_failed, "transfer failed: " + why, where);
}

/// curl_error, saying which proxy (if any) the request went through.
Error transfer_error(CURLcode code, const char* detail, const HttpRequest& request,
                     const Transfer& transfer, long proxy_status,
                     const std::optional<ProxyRoute>& proxy) {
  Error error = curl_error(code, detail, request, transfer, proxy_status);
  if (proxy) {
    error.proxy = url_without_credentials(proxy->url) + " (from " + proxy->source + ")";
    error.message += " (through the proxy " + error.proxy + ")";
  }
  return error;
}

/// True when libcurl's built-in CA bundle is a file this process can read. libcurl caches a
/// CA store in its multi handle only when the store comes from a file alone; Debian's libcurl
/// also has a default CA directory, and with it every new TLS connection read and parsed the
/// whole bundle again (32.6 ms against 2.7 ms per connection, measured).
bool system_bundle_readable() {
  static const bool readable = [] {
    CURL* probe = curl_easy_init();
    if (!probe) return false;
    char* bundle = nullptr;
    const bool known = curl_easy_getinfo(probe, CURLINFO_CAINFO, &bundle) == CURLE_OK && bundle;
    const bool ok = known && ::access(bundle, R_OK) == 0;
    curl_easy_cleanup(probe);
    return ok;
  }();
  return readable;
}

}  // namespace

void curl_global_once() {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

CurlHandle::CurlHandle() : m_handle(curl_easy_init()) {}

CurlHandle::~CurlHandle() {
  if (m_handle) curl_easy_cleanup(m_handle);
  curl_slist_free_all(m_headers);
}

bool CurlHandle::stands_for(const HttpRequest& request, const std::string& proxy,
                            bool progress) const {
  if (!m_standing) return false;
  const Standing& s = *m_standing;
  return s.url == request.url && s.proxy == proxy && s.ca_file == request.ca_file &&
         s.connect_timeout_ms == static_cast<long>(request.connect_timeout.count()) &&
         s.total_timeout_ms == static_cast<long>(request.total_timeout.count()) &&
         s.method == request.method && s.has_body == has_body(request) &&
         s.headers == request.headers && s.progress == progress;
}

namespace {

/// Every standing option of `s` on a handle just reset; false when curl refused one.
bool set_standing(CURL* handle, const CurlHandle::Standing& s, curl_slist* headers) {
  bool ok = true;
  const auto set = [&](CURLoption option, auto value) {
    ok = curl_easy_setopt(handle, option, value) == CURLE_OK && ok;
  };
  set(CURLOPT_URL, s.url.c_str());
  // clef chose the proxy (proxy_route); "" stops libcurl from reading the environment itself.
  set(CURLOPT_PROXY, s.proxy.c_str());
  // proxy_route applied no_proxy already: without this libcurl read no_proxy and NO_PROXY from
  // the environment again for every transfer (two scans of environ each).
  set(CURLOPT_NOPROXY, "");
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_FOLLOWLOCATION, 0L);
  set(CURLOPT_SSL_VERIFYPEER, 1L);
  set(CURLOPT_SSL_VERIFYHOST, 2L);
  // A CA file of the user's is added to, not replacing, the system's trust: libcurl keeps its
  // default CA directory then. Without one, the system's bundle alone (on Debian the directory
  // holds the same certificates), so that libcurl reads it once and not per connection.
  if (!s.ca_file.empty())
    set(CURLOPT_CAINFO, s.ca_file.c_str());
  else if (system_bundle_readable())
    set(CURLOPT_CAPATH, static_cast<const char*>(nullptr));
  set(CURLOPT_TCP_KEEPALIVE, 1L);
  set(CURLOPT_CONNECTTIMEOUT_MS, s.connect_timeout_ms);
  set(CURLOPT_TIMEOUT_MS, s.total_timeout_ms);
  set(CURLOPT_HTTPHEADER, headers);
  set(CURLOPT_CUSTOMREQUEST, s.method.c_str());
  if (!s.has_body) set(CURLOPT_HTTPGET, 1L);
  set(CURLOPT_WRITEFUNCTION, on_body);
  set(CURLOPT_HEADERFUNCTION, on_header);
  if (s.progress) {
    set(CURLOPT_NOPROGRESS, 0L);
    set(CURLOPT_XFERINFOFUNCTION, on_progress);
  }
  return ok;
}

}  // namespace

void CurlTransfer::prepare(CurlHandle& pooled, const HttpRequest& request,
                           CancelledBy cancelled_by) {
  m_request = &request;
  m_collected.max_bytes = request.max_response_bytes;
  m_collected.request = &request;
  m_proxy = proxy_route(request);
  const std::string proxy = m_proxy ? m_proxy->url : std::string();
  const bool progress = cancelled_by == CancelledBy::curl &&
                        (request.cancel || request.cancel_token.can_be_cancelled());
  CURL* handle = pooled.get();
  if (!pooled.stands_for(request, proxy, progress)) {
    curl_easy_reset(handle);  // keeps the connection cache, clears every option
    pooled.m_standing = CurlHandle::Standing{request.url,
                                             proxy,
                                             request.ca_file,
                                             static_cast<long>(request.connect_timeout.count()),
                                             static_cast<long>(request.total_timeout.count()),
                                             request.method,
                                             has_body(request),
                                             request.headers,
                                             progress};
    curl_slist_free_all(pooled.m_headers);
    pooled.m_headers = nullptr;
    for (const auto& [name, value] : request.headers) {
      pooled.m_headers = curl_slist_append(pooled.m_headers, (name + ": " + value).c_str());
    }
    pooled.m_headers = curl_slist_append(pooled.m_headers, "Expect:");  // never wait for 100
    // Set again from scratch next time if any failed (out of memory, a NUL in a header).
    if (!set_standing(handle, *pooled.m_standing, pooled.m_headers)) pooled.m_standing.reset();
  }
  // This transfer's own: its body and the buffers its callbacks fill.
  if (has_body(request)) {
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &m_collected);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &m_collected);
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, m_detail);
  if (progress) curl_easy_setopt(handle, CURLOPT_XFERINFODATA, &m_collected);
}

Result<HttpResponse> CurlTransfer::finish(CURL* handle, CURLcode code) {
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, nullptr);
  long status = 0;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  // An error status with a body past the cap is still that error (a 402, a spend limit's 429):
  // its class is the status's, its words the first bytes, which were kept.
  const bool oversized_error = code != CURLE_OK && m_collected.too_large && status >= 400;
  if (code != CURLE_OK && !oversized_error) {
    long proxy_status = 0;
    curl_easy_getinfo(handle, CURLINFO_HTTP_CONNECTCODE, &proxy_status);
    return transfer_error(code, m_detail, *m_request, m_collected, proxy_status, m_proxy);
  }
  HttpResponse response;
  response.status = static_cast<int>(status);
  response.headers = std::move(m_collected.headers);
  response.body = std::move(m_collected.body);
  return response;
}

}  // namespace clef::detail
