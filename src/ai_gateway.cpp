// The implementation of ai_gateway.hpp: Cloudflare AI Gateway's URL and cf-aig-* headers.
#include "ai_gateway.hpp"

#include <cmath>

#include "json_text.hpp"

namespace clef::detail {
namespace {

constexpr std::string_view gateway_suffix = "/workers-ai";
constexpr std::chrono::seconds min_cache_ttl{60};
constexpr std::chrono::seconds max_cache_ttl{30 * 24 * 3600};  // "one month"
constexpr std::size_t max_metadata_key = 256;

bool is_name(const std::string& text) {
  if (text.empty() || text.size() > 64) return false;
  for (const char c : text) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool has_control(const std::string& text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

Error gateway_error(const std::string& message, const std::string& where) {
  return make_error(ErrorKind::invalid_input, message, "gateway." + where);
}

bool asks_anything(const AiGatewayOptions& gateway) {
  return gateway.cache_ttl || gateway.skip_cache || !gateway.collect_log_payload ||
         !gateway.metadata.empty();
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
    if (key.empty() || key.size() > max_metadata_key || has_control(key)) {
      return gateway_error("a metadata key must be 1 to 256 characters, none a control character",
                           where);
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

}  // namespace

bool is_gateway_url(std::string_view base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  return base_url.size() > gateway_suffix.size() &&
         base_url.compare(base_url.size() - gateway_suffix.size(), gateway_suffix.size(),
                          gateway_suffix) == 0;
}

bool through_gateway(const ClientOptions& options) {
  return options.backend == Backend::workers_ai &&
         (!options.gateway.id.empty() || is_gateway_url(options.base_url));
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
      return gateway_error(options.backend == Backend::workers_ai
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
  if (!gateway.id.empty() && is_gateway_url(options.base_url)) {
    return gateway_error("give a gateway id or a gateway URL, not both", "id");
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
  return headers;
}

}  // namespace clef::detail
