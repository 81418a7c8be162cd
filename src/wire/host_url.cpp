// The implementation of host_url.hpp: a server's URL read strictly.
#include "wire/host_url.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "util/ascii.hpp"

namespace clef::detail {
namespace {

Error refused(const std::string& why) {
  return make_error(ErrorKind::invalid_input, why);
}

bool is_ipv6(const std::string& text) {
  in6_addr address{};
  return inet_pton(AF_INET6, text.c_str(), &address) == 1;
}

bool is_host_name(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
  });
}

bool is_port(std::string_view text) {
  if (text.empty() || text.size() > 5) return false;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const long value = std::stol(std::string(text));
  return value >= 1 && value <= 65535;
}

/// host[:port] or [v6][:port], into `url`.
Status read_host_and_port(std::string_view text, HostUrl& url) {
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return refused("its '[' has no ']'");
    url.host = std::string(text.substr(1, close - 1));
    url.ipv6 = true;
    if (!is_ipv6(url.host)) return refused("[" + url.host + "] is not an IPv6 address");
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty()) return {};
    if (rest.front() != ':') return refused("something follows its ']' that is not :PORT");
    url.port = std::string(rest.substr(1));
  } else if (text.find_first_of("[]") != std::string_view::npos) {
    return refused("a '[' or ']' that is not around an IPv6 address");
  } else if (std::count(text.begin(), text.end(), ':') > 1) {
    url.host = std::string(text);  // a bare IPv6 address, which cannot have a port
    url.ipv6 = true;
    if (!is_ipv6(url.host)) return refused("an IPv6 address needs brackets to have a port");
    return {};
  } else if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    url.host = std::string(text.substr(0, colon));
    url.port = std::string(text.substr(colon + 1));
  } else {
    url.host = std::string(text);
  }
  if (url.port.empty() && text.size() > 0 && text.back() == ':')
    return refused("its port is not 1 to 65535");
  if (!url.port.empty() && !is_port(url.port)) return refused("its port is not 1 to 65535");
  if (!url.ipv6 && !is_host_name(url.host)) {
    return refused("\"" + url.host + "\" is not a host name (letters, digits, '-', '.', '_')");
  }
  return {};
}

}  // namespace

Result<HostUrl> parse_host_url(std::string_view text) {
  for (const unsigned char c : text) {
    if (c <= 0x20 || c >= 0x7f) return refused("it holds a space, control or non-ASCII byte");
  }
  if (text.find_first_of("?#") != std::string_view::npos)
    return refused("it has a query or fragment");
  // A browser reads '\' as '/', curl as part of the user name: a host where they differ is
  // not written one way.
  if (text.find('\\') != std::string_view::npos) return refused("it holds a '\\'");
  HostUrl url;
  std::string_view rest = text;
  if (const auto scheme = rest.find("://"); scheme != std::string_view::npos) {
    url.scheme = ascii_lower(rest.substr(0, scheme));
    if (url.scheme != "http" && url.scheme != "https")
      return refused("its scheme is not http:// or https://");
    rest.remove_prefix(scheme + 3);
  }
  // "http//host:8000" (a ':' left out) would read as the host "http" with the path "//host…".
  if (rest.find("//") != std::string_view::npos)
    return refused("it has a '//' after its host (is a ':' missing after http?)");
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    url.path = std::string(rest.substr(slash));
    while (!url.path.empty() && url.path.back() == '/') url.path.pop_back();
  }
  // The userinfo ends at the authority's last '@': a password may hold an unencoded '@'.
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    url.userinfo = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  if (auto read = read_host_and_port(authority, url); !read) return read.error();
  if (url.scheme.empty() && (ascii_lower(url.host) == "http" || ascii_lower(url.host) == "https"))
    return refused("\"" + url.host + "\" is a scheme, not a host: write " + url.host +
                   "://HOST:PORT");
  return url;
}

std::string canonical_host(std::string_view host, bool ipv6) {
  const std::string lower = ascii_lower(host);
  char text[INET6_ADDRSTRLEN] = {};
  if (ipv6) {
    in6_addr address{};
    if (inet_pton(AF_INET6, lower.c_str(), &address) != 1) return lower;
    // ::ffff:127.0.0.1 is the IPv4 address 127.0.0.1, and a connection to it reaches that.
    if (IN6_IS_ADDR_V4MAPPED(&address)) {
      in_addr v4{};
      std::memcpy(&v4, &address.s6_addr[12], sizeof v4);
      if (inet_ntop(AF_INET, &v4, text, sizeof text)) return text;
    }
    if (inet_ntop(AF_INET6, &address, text, sizeof text)) return text;
    return lower;
  }
  in_addr address{};
  // inet_aton takes what the resolver takes for a numeric host: 127.1, 2130706433, 0x7f.1.
  if (!lower.empty() && inet_aton(lower.c_str(), &address) != 0 &&
      inet_ntop(AF_INET, &address, text, sizeof text))
    return text;
  return lower;
}

std::string normalized_path(std::string_view path) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto hex = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (path[i] == '%' && i + 2 < path.size() && hex(path[i + 1]) >= 0 && hex(path[i + 2]) >= 0) {
      const char c = static_cast<char>(hex(path[i + 1]) * 16 + hex(path[i + 2]));
      const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                              (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                              c == '~';
      if (unreserved) {
        out += c;
      } else {
        out += '%';
        out += digits[hex(path[i + 1])];
        out += digits[hex(path[i + 2])];
      }
      i += 2;
      continue;
    }
    out += path[i];
  }
  // RFC 3986 §5.2.4: "/x/.." is "", "/./x" is "/x" — the path the server is asked for.
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (start < out.size()) {
    const auto slash = out.find('/', start + 1);
    const std::string segment =
        out.substr(start + 1, slash == std::string::npos ? std::string::npos : slash - start - 1);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (segment != "." && !segment.empty()) {
      segments.push_back(segment);
    }
    if (slash == std::string::npos) break;
    start = slash;
  }
  std::string normal;
  for (const auto& segment : segments) normal += "/" + segment;
  return normal;
}

}  // namespace clef::detail
