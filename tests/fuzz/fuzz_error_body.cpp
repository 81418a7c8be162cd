// libFuzzer: the error mapping for any status, headers and body. Input: 2 bytes of status,
// then "name: value" header lines up to an empty line, then the body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "http_errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  clef::HttpResponse response;
  response.status = 100 + (data[0] << 8 | data[1]) % 500;
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
  for (auto backend :
       {clef::Backend::ollama, clef::Backend::workers_ai, clef::Backend::systemone}) {
    const clef::Error error =
        clef::detail::error_from_response(backend, response, "clef-flash", "<");
    (void)error.to_string();
    (void)error.retryable();
  }
  return 0;
}
