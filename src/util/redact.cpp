// The implementation of redact.hpp: the one redaction helper.
#include "util/redact.hpp"

#include <algorithm>

#include "util/ascii.hpp"
#include "util/base64.hpp"

namespace clef::detail {

std::string redact(std::string_view text, std::string_view secret) {
  if (secret.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t from = 0;
  for (std::size_t at = text.find(secret); at != std::string_view::npos;
       at = text.find(secret, from)) {
    out.append(text, from, at - from);
    out += redacted_placeholder;
    from = at + secret.size();
  }
  out.append(text, from, std::string_view::npos);
  return out;
}

void Secrets::add(std::string_view secret) {
  if (secret.empty()) return;
  for (const auto& held : m_secrets) {
    if (held == secret) return;
  }
  m_secrets.emplace_back(secret);
  std::stable_sort(m_secrets.begin(), m_secrets.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string redact_all(std::string_view text, const Secrets& secrets) {
  std::string out(text);
  for (const auto& secret : secrets.m_secrets) out = redact(out, std::string_view(secret));
  return out;
}

void redact_decision(Decision& decision, const Secrets& secret) {
  if (secret.empty()) return;
  decision.model = redact_all(decision.model, secret);
  decision.request_id = redact_all(decision.request_id, secret);
  decision.raw_json = redact_all(decision.raw_json, secret);
  for (auto& answer : decision.answers) {
    answer.problem = redact_all(answer.problem, secret);
    answer.raw_json = redact_all(answer.raw_json, secret);
  }
}

namespace {

/// Whether `text` holds `lower` (lower-case) in any case: no lower-cased copy (every request's
/// headers are read for credentials when it is recorded or its answer cached).
bool contains_any_case(std::string_view text, std::string_view lower) {
  for (std::size_t at = 0; at + lower.size() <= text.size(); ++at) {
    std::size_t i = 0;
    while (i < lower.size() && ascii_lower(text[at + i]) == lower[i]) ++i;
    if (i == lower.size()) return true;
  }
  return false;
}

/// A header whose value is a credential: a name that says authorization (Authorization,
/// Proxy-Authorization, AI Gateway's cf-aig-authorization), key, token or secret (X-Api-Key,
/// Api-Key, X-Auth-Token…).
bool is_credential_header(std::string_view name) {
  return contains_any_case(name, "authorization") || contains_any_case(name, "key") ||
         contains_any_case(name, "token") || contains_any_case(name, "secret");
}

/// http://user:password@host/…: the whole userinfo, and the password.
void add_url_credentials(std::string_view url, Secrets& out) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return;
  const auto authority_end = url.find_first_of("/?#", scheme + 3);
  const std::string_view authority = url.substr(scheme + 3, authority_end == std::string_view::npos
                                                                ? std::string_view::npos
                                                                : authority_end - (scheme + 3));
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) return;
  const std::string_view userinfo = authority.substr(0, at);
  out.add(userinfo);
  const auto colon = userinfo.find(':');
  if (colon != std::string_view::npos) out.add(userinfo.substr(colon + 1));
}

/// `text` percent-encoded as a URL's userinfo is usually written: every byte but the unreserved
/// ones (RFC 3986) as %XX.
std::string percent_encoded(std::string_view text) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

}  // namespace

void add_basic_credentials(std::string_view user_and_password, Secrets& out) {
  out.add(user_and_password);
  const auto colon = user_and_password.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view password = user_and_password.substr(colon + 1);
  out.add(password);
  out.add(percent_encoded(password));  // as a URL holds it ("p%40ss" for "p@ss")
  for (const std::string& encoded : {base64_encode(user_and_password), base64_encode(password)}) {
    out.add(encoded);
    out.add(std::string_view(encoded).substr(0, encoded.find('=')));  // echoed unpadded
  }
}

Secrets request_credentials(const HttpRequest& request) {
  Secrets out;
  for (const auto& [name, value] : request.headers) {
    if (!is_credential_header(name)) continue;
    out.add(value);
    // "Bearer TOKEN", "Basic BASE64": a server echoes the credential without its scheme too.
    const auto space = value.find(' ');
    if (space != std::string::npos) {
      const auto start = value.find_first_not_of(' ', space);
      if (start != std::string::npos) out.add(std::string_view(value).substr(start));
      // Basic: the user and password it encodes, in the forms a server may echo them.
      if (start != std::string::npos && ascii_lower(value.substr(0, space)) == "basic") {
        if (auto decoded = base64_decode(std::string_view(value).substr(start)))
          add_basic_credentials(*decoded, out);
      }
    }
  }
  add_url_credentials(request.url, out);
  return out;
}

}  // namespace clef::detail
