// The implementation of clef/backend.hpp: the kinds of server clef speaks to, their names,
// environment variables and defaults.
#include "clef/backend.hpp"

#include <string>

namespace clef {
namespace {

std::string trim(std::string_view text) {
  const char* space = " \t\r\n\"'";
  const auto first = text.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(space);
  return std::string(text.substr(first, last - first + 1));
}

bool is_port(const std::string& text) {
  if (text.empty() || text.size() > 5) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return std::stoi(text) <= 65535;
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

const char* token_variable(Backend backend) noexcept {
  switch (backend) {
    case Backend::workers_ai:
      return "CLOUDFLARE_API_TOKEN";
    case Backend::systemone:
      return "CLEF_API_KEY";
    case Backend::openai:
      return "OPENAI_API_KEY";
    case Backend::ollama:
      break;
  }
  return nullptr;
}

// Mirrors Ollama's envconfig.Host(): scheme defaults to http with port 11434; an explicit
// http:// or https:// defaults to 80 or 443; a bind address (0.0.0.0, ::) means loopback.
std::string ollama_base_url(std::string_view ollama_host) {
  const std::string fallback = "http://127.0.0.1:11434";
  std::string value = trim(ollama_host);
  if (value.empty()) return fallback;

  std::string scheme = "http";
  std::string port = "11434";
  if (auto at = value.find("://"); at != std::string::npos) {
    scheme = value.substr(0, at);
    value = value.substr(at + 3);
    if (scheme == "http")
      port = "80";
    else if (scheme == "https")
      port = "443";
  }
  std::string path;
  if (auto slash = value.find('/'); slash != std::string::npos) {
    path = value.substr(slash);
    value = value.substr(0, slash);
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  // "alice:pw@host:port": the userinfo is kept as written, and the host parsed after it.
  std::string userinfo;
  if (auto at = value.rfind('@'); at != std::string::npos) {
    userinfo = value.substr(0, at + 1);
    value = value.substr(at + 1);
  }

  std::string host = value;
  if (!value.empty() && value.front() == '[') {  // [v6] or [v6]:port
    const auto close = value.find(']');
    if (close == std::string::npos) return fallback;
    host = value.substr(1, close - 1);
    if (close + 1 < value.size()) {
      if (value[close + 1] != ':') return fallback;
      port = value.substr(close + 2);
    }
  } else if (auto colon = value.rfind(':');
             colon != std::string::npos && value.find(':') == colon) {  // host:port, not bare v6
    host = value.substr(0, colon);
    port = value.substr(colon + 1);
  }
  if (!is_port(port)) return fallback;
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return scheme + "://" + userinfo + host + ":" + port + path;
}

}  // namespace clef
