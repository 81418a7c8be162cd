// The implementation of clef/backend.hpp: the kinds of server clef speaks to, their names,
// environment variables and defaults.
#include "clef/backend.hpp"

#include <string>

#include "wire/backend_wire.hpp"
#include "wire/host_url.hpp"

namespace clef {
namespace {

constexpr std::string_view ollama_default_url = "http://127.0.0.1:11434";

std::string trim(std::string_view text) {
  const char* space = " \t\r\n\"'";
  const auto first = text.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(space);
  return std::string(text.substr(first, last - first + 1));
}

/// Where `url`'s authority starts (after "scheme://", else 0) and ends (the first '/', '?' or
/// '#' after it, else the end).
std::pair<std::size_t, std::size_t> authority_of(std::string_view url) {
  const auto scheme = url.find("://");
  const std::size_t begin = scheme == std::string_view::npos ? 0 : scheme + 3;
  const auto end = url.find_first_of("/?#", begin);
  return {begin, end == std::string_view::npos ? url.size() : end};
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int high = hex_value(text[i + 1]);
      const int low = hex_value(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out += static_cast<char>(high * 16 + low);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

}  // namespace

std::optional<UrlCredentials> url_credentials(std::string_view url) {
  const auto [begin, end] = authority_of(url);
  // The userinfo ends at the authority's last '@': a password may hold an unencoded '@'.
  const auto at = url.substr(begin, end - begin).rfind('@');
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view userinfo = url.substr(begin, at);
  const auto colon = userinfo.find(':');
  UrlCredentials credentials;
  credentials.user = percent_decoded(userinfo.substr(0, colon));
  if (colon != std::string_view::npos)
    credentials.password = percent_decoded(userinfo.substr(colon + 1));
  return credentials;
}

std::string url_without_credentials(std::string_view url) {
  const auto [begin, end] = authority_of(url);
  const auto at = url.substr(begin, end - begin).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, begin)) + std::string(url.substr(begin + at + 1));
}

const char* to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::ollama:
      return "ollama";
    case Backend::workers_ai:
      return "workers-ai";
    case Backend::systemone:
      return "systemone";
    case Backend::openai:
      return "openai";
  }
  return "unknown";
}

std::optional<Backend> backend_named(std::string_view name) noexcept {
  for (Backend backend :
       {Backend::ollama, Backend::workers_ai, Backend::systemone, Backend::openai}) {
    if (name == to_string(backend)) return backend;
  }
  return std::nullopt;
}

const BackendTraits& traits_of(Backend backend) noexcept {
  return detail::wire_of(backend).traits();
}

const char* token_variable(Backend backend) noexcept {
  return traits_of(backend).token_variable;
}

// Ollama's envconfig.Host(): scheme defaults to http with port 11434; an explicit http:// or
// https:// defaults to 80 or 443; a bind address (0.0.0.0, ::) means loopback; quotes and
// surrounding spaces are stripped. Read strictly (host_url.hpp) where Ollama falls back.
Result<std::string> read_ollama_host(std::string_view ollama_host) {
  const std::string value = trim(ollama_host);
  if (value.empty()) return std::string(ollama_default_url);
  auto url = detail::parse_host_url(value);
  if (!url) {
    return make_error(ErrorKind::invalid_input,
                      "OLLAMA_HOST \"" + url_without_credentials(value) +
                          "\" cannot be read as written: " + url.error().message,
                      "OLLAMA_HOST");
  }
  std::string scheme = url->scheme.empty() ? "http" : url->scheme;
  std::string port = url->port;
  if (port.empty()) port = url->scheme.empty() ? "11434" : (scheme == "https" ? "443" : "80");
  std::string host = url->host;
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (url->ipv6 || host.find(':') != std::string::npos) host = "[" + host + "]";
  const std::string userinfo = url->userinfo.empty() ? "" : url->userinfo + "@";
  return scheme + "://" + userinfo + host + ":" + port + url->path;
}

Status check_server_url(std::string_view url) {
  auto read = detail::parse_host_url(url);
  if (!read) return read.error();
  if (read->host.empty()) return make_error(ErrorKind::invalid_input, "it names no host");
  return {};
}

std::string ollama_base_url(std::string_view ollama_host) {
  auto read = read_ollama_host(ollama_host);
  return read ? std::move(read).value() : std::string(ollama_default_url);
}

std::string server_identity(std::string_view base_url) {
  auto url = detail::parse_host_url(base_url);
  if (!url) return std::string(base_url);
  const std::string scheme = url->scheme.empty() ? "http" : url->scheme;
  std::string port = url->port.empty() ? (scheme == "https" ? "443" : "80") : url->port;
  // "08080" and "8080" are one port.
  port = std::to_string(std::stol(port));
  std::string host = detail::canonical_host(url->host, url->ipv6);
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // still IPv6
  return scheme + "://" + host + ":" + port + detail::normalized_path(url->path);
}

}  // namespace clef
