// Internal: a server's URL as a person writes it (--host, --hosts FILE, OLLAMA_HOST), read
// strictly — anything that cannot be read as written is refused, never guessed — and the one
// form two spellings of a server compare by.
#pragma once

#include <string>
#include <string_view>

#include "clef/result.hpp"

namespace clef::detail {

struct HostUrl {
  std::string scheme;    ///< "http" or "https", lower case; "" when the text had none.
  std::string userinfo;  ///< "alice:pw", percent-encoded as written; "" for none.
  std::string host;      ///< As written, without IPv6 brackets; "" for none.
  bool ipv6 = false;
  std::string port;  ///< Digits, 1 to 65535; "" for none.
  std::string path;  ///< "/ollama", without trailing '/'; "" for none.
};

/// Reads `text` ([scheme://][userinfo@]host[:port][/path]): printable ASCII only (no '\\'), no
/// "//" after the scheme's (http//host is refused, not read as the host "http"), http or https
/// in any case (as curl takes it), brackets around an IPv6 address and nowhere else (a stray or
/// missing ']' is refused), a bare IPv6 address only without a port, a host name of letters,
/// digits, '-', '.' and '_', a port from 1 to 65535, no query or fragment. The error says what
/// is wrong, not where (the caller names the flag or file).
Result<HostUrl> parse_host_url(std::string_view text);

/// `host` as a connection would reach it: lower case; an IPv4 address in any form inet_aton
/// takes (127.1, 2130706433, 0x7f.0.0.1) as four decimals; an IPv6 address as inet_ntop writes
/// it ([0:0:0:0:0:0:0:1] and [::1] alike), an IPv4-mapped one ([::ffff:127.0.0.1]) as its IPv4
/// address (then `ipv6` is no longer true of it: canonical_host_is_ipv6 says).
std::string canonical_host(std::string_view host, bool ipv6);

/// `path` with each percent-escape of an unreserved character decoded (RFC 3986 §6.2.2.2:
/// /%78 is /x), the hex of the others in upper case, and its dot segments removed (/x/.. is
/// the root, /./x is /x).
std::string normalized_path(std::string_view path);

}  // namespace clef::detail
