// libFuzzer: the error mapping for any status, headers and body. Input: 2 bytes of status
// (big-endian: 0x0194 is 404; a value outside 100..599 becomes 100 + value % 500), then
// "name: value" header lines up to an empty line, then the body.
// Oracles beyond "no crash": the status class decides the kind as error.hpp documents it, the
// status is kept, the token never survives into any text, and Retry-After is never negative
// or past its one-day cap.
#include <cstddef>
#include <cstdint>
#include <string>

#include "wire/http_errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  clef::HttpResponse response;
  const int encoded = data[0] << 8 | data[1];
  response.status = encoded >= 100 && encoded <= 599 ? encoded : 100 + encoded % 500;
  const std::string rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const auto blank = rest.find("\n\n");
  const std::string head = blank == std::string::npos ? "" : rest.substr(0, blank);
  response.body = blank == std::string::npos ? rest : rest.substr(blank + 2);
  for (std::size_t at = 0; at < head.size();) {
    auto end = head.find('\n', at);
    if (end == std::string::npos) end = head.size();
    const std::string line = head.substr(at, end - at);
    const auto colon = line.find(':');
    if (colon != std::string::npos)
      response.headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
    at = end + 1;
  }
  using clef::ErrorKind;
  const int status = response.status;
  for (auto backend :
       {clef::Backend::ollama, clef::Backend::workers_ai, clef::Backend::systemone}) {
    // A secret the placeholder "<redacted>" contains: redaction must still end.
    (void)clef::detail::error_from_response(backend, response, "clef-flash", std::string_view("<"))
        .to_string();
    const std::string secret = "SECRET-TOKEN-42";
    const clef::Error error = clef::detail::error_from_response(backend, response, "clef-flash",
                                                                std::string_view(secret));
    const std::string text = error.to_string();
    if (text.find(secret) != std::string::npos ||
        error.request_id.find(secret) != std::string::npos ||
        error.server_code.find(secret) != std::string::npos)
      __builtin_trap();  // the token leaked
    if (error.http_status != status) __builtin_trap();
    const ErrorKind kind = error.kind;
    // The documented exceptions: AI Gateway's 400 with code 2001 is not_found, and a 4xx with
    // Workers AI's 3021 is rate_limited.
    const bool no_such_gateway = backend == clef::Backend::workers_ai && status == 400 &&
                                 error.server_code == "2001" && kind == ErrorKind::not_found;
    const bool per_minute = status >= 400 && status < 500 && error.server_code == "3021" &&
                            kind == ErrorKind::rate_limited;
    const bool by_status =
        (status == 401 || status == 403 || status == 407) ? kind == ErrorKind::authentication
        : status == 402                                   ? kind == ErrorKind::quota_exhausted
        : status == 404                                   ? kind == ErrorKind::not_found
        : status == 408                                   ? kind == ErrorKind::timeout
        : status == 429 ? kind == ErrorKind::rate_limited || kind == ErrorKind::quota_exhausted
        : status >= 400 && status < 500 ? kind == ErrorKind::request_rejected
        : status >= 500                 ? kind == ErrorKind::server_error
                                        : kind == ErrorKind::invalid_response;
    if (!no_such_gateway && !per_minute && !by_status) __builtin_trap();
    if (error.retry_after && (error.retry_after->count() < 0 ||
                              *error.retry_after > clef::detail::max_retry_after_value))
      __builtin_trap();
    (void)error.retryable();
  }
  return 0;
}
