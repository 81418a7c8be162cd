// The implementation of ai_gateway.hpp: Cloudflare AI Gateway's URL and cf-aig-* headers.
#include "wire/ai_gateway.hpp"

#include <cmath>

#include "util/ascii.hpp"
#include "util/json_text.hpp"
#include "wire/backend_wire.hpp"

namespace clef::detail {
namespace {

constexpr std::string_view gateway_suffix = "/workers-ai";
constexpr std::chrono::seconds min_cache_ttl{60};
constexpr std::chrono::seconds max_cache_ttl{30 * 24 * 3600};  // "one month"
constexpr std::size_t max_metadata_key = 256;
constexpr std::size_t max_metadata_value = 1024;

bool is_name(const std::string& text) {
  if (text.empty() || text.size() > 64) return false;
  for (const char c : text) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

/// An account id as Cloudflare writes one: letters and digits.
bool is_account(std::string_view text) {
  return text.size() <= 64 && is_ascii_alphanumeric(text);
}

Error gateway_error(const std::string& message, const std::string& where,
                    ErrorKind kind = ErrorKind::invalid_input) {
  return make_error(kind, message, "gateway." + where);
}

bool asks_anything(const AiGatewayOptions& gateway) {
  return gateway.cache_ttl || gateway.skip_cache || !gateway.collect_log_payload ||
         !gateway.metadata.empty();
}

/// A metadata text (key or value): bounded, no control character, valid UTF-8 — it travels in
/// an HTTP header.
Status check_metadata_text(const std::string& text, std::size_t max, const std::string& what,
                           const std::string& where) {
  std::string json;
  if (text.size() > max || has_control_characters(text) || !append_json_string(json, text, where)) {
    return gateway_error(what + " must be at most " + std::to_string(max) +
                             " bytes of UTF-8 text with no control character",
                         where);
  }
  return {};
}

Status check_metadata(const AiGatewayOptions& gateway) {
  if (gateway.metadata.size() > max_gateway_metadata) {
    return gateway_error("cf-aig-metadata takes at most " + std::to_string(max_gateway_metadata) +
                             " entries (AI Gateway silently drops the rest), not " +
                             std::to_string(gateway.metadata.size()),
                         "metadata");
  }
  for (std::size_t i = 0; i < gateway.metadata.size(); ++i) {
    const auto& [key, value] = gateway.metadata[i];
    const std::string where = "metadata[" + std::to_string(i) + "]";
    if (key.empty()) return gateway_error("a metadata key must not be empty", where);
    if (auto s = check_metadata_text(key, max_metadata_key, "a metadata key", where); !s) return s;
    if (const auto* text = std::get_if<std::string>(&value)) {
      if (auto s = check_metadata_text(*text, max_metadata_value, "a metadata value", where); !s)
        return s;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (gateway.metadata[j].first == key) {
        return gateway_error("metadata key \"" + key + "\" given twice", where);
      }
    }
    if (const auto* number = std::get_if<double>(&value); number && !std::isfinite(*number)) {
      return gateway_error("metadata \"" + key + "\" is not a finite number", where);
    }
  }
  return {};
}

/// A gateway URL's path names the account and the gateway: …/ACCOUNT/GATEWAY/workers-ai.
Status check_gateway_url(std::string_view base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  base_url.remove_suffix(gateway_suffix.size());
  const auto gateway_at = base_url.rfind('/');
  const auto account_at = gateway_at == std::string_view::npos || gateway_at == 0
                              ? std::string_view::npos
                              : base_url.rfind('/', gateway_at - 1);
  const auto scheme_end = base_url.find("://");
  const auto path_at =
      scheme_end == std::string_view::npos ? scheme_end : base_url.find('/', scheme_end + 3);
  // No empty, "." or ".." segment: the path is sent as written, and a server resolves those.
  const std::string_view path =
      path_at == std::string_view::npos ? std::string_view() : base_url.substr(path_at);
  const bool odd_segment = path.find("//") != std::string_view::npos ||
                           path.find("/./") != std::string_view::npos ||
                           path.find("/../") != std::string_view::npos;
  if (account_at == std::string_view::npos || scheme_end == std::string_view::npos || odd_segment ||
      path_at == std::string_view::npos || account_at < path_at ||
      !is_account(base_url.substr(account_at + 1, gateway_at - account_at - 1)) ||
      !is_name(std::string(base_url.substr(gateway_at + 1)))) {
    return gateway_error(
        "a gateway URL is …/v1/ACCOUNT/GATEWAY/workers-ai, the account letters "
        "and digits, the gateway letters, digits, - or _",
        "base_url");
  }
  return {};
}

}  // namespace

bool through_gateway(const ClientOptions& options) {
  return wire_of(options.backend).through_gateway(options);
}

bool BackendWire::through_gateway(const ClientOptions&) const {
  return false;
}

std::string gateway_root(const ClientOptions& options) {
  std::string base = options.base_url.empty() ? ai_gateway_default_base_url : options.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/" + options.account_id + "/" + options.gateway.id + std::string(gateway_suffix);
}

Status check_gateway_options(const ClientOptions& options) {
  const AiGatewayOptions& gateway = options.gateway;
  if (!through_gateway(options)) {
    if (asks_anything(gateway) || !gateway.id.empty()) {
      return gateway_error(traits_of(options.backend).takes_gateway
                               ? "cf-aig-* options need a gateway: a gateway id, or a gateway "
                                 "URL (…/workers-ai) as the base URL"
                               : "AI Gateway is for the Workers AI backend",
                           "id");
    }
    return {};
  }
  if (!gateway.id.empty() && !is_name(gateway.id)) {
    return gateway_error("a gateway id is 1 to 64 letters, digits, - or _", "id");
  }
  if (!gateway.id.empty() && is_ai_gateway_url(options.base_url)) {
    return gateway_error("give a gateway id or a gateway URL, not both", "id");
  }
  if (gateway.id.empty()) {
    if (auto url = check_gateway_url(options.base_url); !url) return url;
  }
  if (has_control_characters(gateway.token) ||
      trimmed_space(gateway.token).size() != gateway.token.size()) {
    // Redaction looks for the token as given: a stray newline or space would leave it unmatched.
    // authentication, as the API token's: the token cannot be used, however it was given.
    return gateway_error(
        "the gateway token has white space around it or a control character: "
        "give the bare token",
        "token", ErrorKind::authentication);
  }
  if (!is_bare_token(gateway.token)) {
    return gateway_error(
        "the gateway token has a space or a byte outside visible ASCII in it (a "
        "'Bearer ' prefix, or a pasted character?): give the bare token",
        "token", ErrorKind::authentication);
  }
  if (gateway.cache_ttl &&
      (*gateway.cache_ttl < min_cache_ttl || *gateway.cache_ttl > max_cache_ttl)) {
    return gateway_error(
        "cf-aig-cache-ttl must be 60 seconds to 30 days (AI Gateway's bounds), "
        "not " +
            std::to_string(gateway.cache_ttl->count()) + " s",
        "cache_ttl");
  }
  return check_metadata(gateway);
}

std::string gateway_metadata_json(const AiGatewayOptions& gateway) {
  Json object = Json::object();
  for (const auto& [key, value] : gateway.metadata) {
    std::visit([&object, &key = key](const auto& v) { object[key] = v; }, value);
  }
  return clef::dump_json(object);
}

Headers gateway_headers(const ClientOptions& options) {
  Headers headers;
  if (!through_gateway(options)) return headers;
  const AiGatewayOptions& gateway = options.gateway;
  if (gateway.cache_ttl)
    headers.emplace_back("cf-aig-cache-ttl", std::to_string(gateway.cache_ttl->count()));
  if (gateway.skip_cache) headers.emplace_back("cf-aig-skip-cache", "true");
  if (!gateway.collect_log_payload) headers.emplace_back("cf-aig-collect-log-payload", "false");
  if (!gateway.metadata.empty())
    headers.emplace_back("cf-aig-metadata", gateway_metadata_json(gateway));
  // An Authenticated Gateway refuses a request without its token; one that is not ignores it.
  const std::string& token = gateway.token.empty() ? options.api_token : gateway.token;
  if (!token.empty()) headers.emplace_back("cf-aig-authorization", "Bearer " + token);
  return headers;
}

}  // namespace clef::detail

namespace clef {

bool is_ai_gateway_url(std::string_view base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  const std::string_view suffix = detail::gateway_suffix;
  return base_url.size() > suffix.size() &&
         base_url.compare(base_url.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace clef
