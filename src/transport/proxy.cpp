// Which proxy a request goes through. clef decides, not libcurl, so that loopback hosts are
// never proxied (a corporate http_proxy would otherwise swallow requests to a local Ollama)
// and so that errors and -v can say which proxy was used.
#include <arpa/inet.h>

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "clef/transport.hpp"
#include "util/ascii.hpp"

namespace clef {
namespace {

struct UrlHost {
  std::string scheme;  ///< Lower case.
  std::string host;    ///< Lower case, without brackets or a trailing dot.
};

UrlHost host_of(std::string_view url) {
  UrlHost out;
  const auto scheme_end = url.find("://");
  std::size_t begin = 0;
  if (scheme_end != std::string_view::npos) {
    out.scheme = detail::ascii_lower(url.substr(0, scheme_end));
    begin = scheme_end + 3;
  }
  const auto end = url.find_first_of("/?#", begin);
  std::string_view authority =
      url.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
  if (const auto at = authority.rfind('@'); at != std::string_view::npos)
    authority = authority.substr(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    out.host = detail::ascii_lower(
        authority.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1));
  } else {
    out.host = detail::ascii_lower(authority.substr(0, authority.find(':')));
  }
  while (!out.host.empty() && out.host.back() == '.') out.host.pop_back();
  return out;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    // ::ffff:127.x.x.x, an IPv4 loopback address written as IPv6.
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

/// `host` is in the CIDR block `block` ("10.0.0.0/8", "fd00::/8"), as curl 7.86+ reads one.
bool in_cidr(const std::string& host, std::string_view block) {
  const auto slash = block.find('/');
  const std::string network(block.substr(0, slash));
  int bits = -1;
  if (slash != std::string_view::npos) {
    const std::string_view digits = block.substr(slash + 1);
    if (digits.empty() || digits.size() > 3) return false;
    bits = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      bits = bits * 10 + (c - '0');
    }
  }
  unsigned char a[16], b[16];
  int length = 0;
  if (::inet_pton(AF_INET, host.c_str(), a) == 1 && ::inet_pton(AF_INET, network.c_str(), b) == 1)
    length = 4;
  else if (::inet_pton(AF_INET6, host.c_str(), a) == 1 &&
           ::inet_pton(AF_INET6, network.c_str(), b) == 1)
    length = 16;
  else
    return false;
  if (bits < 0) bits = length * 8;
  if (bits > length * 8) return false;
  for (int i = 0; i < length && bits > 0; ++i, bits -= 8) {
    const unsigned mask = bits >= 8 ? 0xffu : (0xffu << (8 - bits)) & 0xffu;
    if ((a[i] & mask) != (b[i] & mask)) return false;
  }
  return true;
}

/// curl's no_proxy rules: "*" alone matches every host; otherwise a comma- or space-separated
/// list of names (a name matches itself and its subdomains; a leading dot is ignored), IP
/// addresses and CIDR blocks.
bool no_proxy_matches(std::string_view list, const std::string& host) {
  std::size_t at = 0;
  bool only_star = true;
  bool any = false;
  while (at < list.size()) {
    const auto end = list.find_first_of(", \t", at);
    std::string token = detail::ascii_lower(
        list.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    at = end == std::string_view::npos ? list.size() : end + 1;
    if (token.empty()) continue;
    any = true;
    if (token != "*") only_star = false;
    if (token.front() == '[' && token.back() == ']') token = token.substr(1, token.size() - 2);
    while (!token.empty() && token.front() == '.') token.erase(0, 1);
    while (!token.empty() && token.back() == '.') token.pop_back();
    if (token.empty()) continue;
    if (in_cidr(host, token)) return true;
    if (host == token) return true;
    if (host.size() > token.size() &&
        host.compare(host.size() - token.size(), token.size(), token) == 0 &&
        host[host.size() - token.size() - 1] == '.')
      return true;
  }
  return any && only_star;
}

/// The host of the URL a thread routed last, and whether it is a loopback one: a loop sends
/// request after request to one URL, and reading it again was a tenth of preparing a transfer.
struct RoutedUrl {
  std::string url;
  UrlHost target;
  bool loopback = false;
};

const RoutedUrl& routed(const std::string& url) {
  thread_local RoutedUrl last;
  if (last.url != url) {  // (the default is what an empty URL reads as)
    last.target = host_of(url);
    last.loopback = is_loopback(last.target.host);
    last.url = url;
  }
  return last;
}

std::optional<ProxyRoute> from_variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return ProxyRoute{value, name};
}

}  // namespace

std::optional<ProxyRoute> proxy_route(const HttpRequest& request) {
  if (request.proxy) {
    if (request.proxy->empty()) return std::nullopt;
    return ProxyRoute{*request.proxy, "the request"};
  }
  const RoutedUrl& url = routed(request.url);
  if (url.loopback) return std::nullopt;
  const UrlHost& target = url.target;
  for (const char* name : {"no_proxy", "NO_PROXY"}) {
    const char* list = std::getenv(name);
    if (list && *list) {
      if (no_proxy_matches(list, target.host)) return std::nullopt;
      break;
    }
  }
  // As curl: the scheme's variable in lower case, and in upper case too except HTTP_PROXY
  // (a CGI program's HTTP_PROXY comes from a request header: httpoxy).
  if (target.scheme == "https") {
    if (auto route = from_variable("https_proxy")) return route;
    if (auto route = from_variable("HTTPS_PROXY")) return route;
  } else if (auto route = from_variable("http_proxy")) {
    return route;
  }
  if (auto route = from_variable("all_proxy")) return route;
  return from_variable("ALL_PROXY");
}

}  // namespace clef
