// The implementation of gateway_flags.hpp: AI Gateway's flags into ClientOptions::gateway.
#include "flags/gateway_flags.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "clef/json.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

Error flag_error(const std::string& flag, const std::string& message) {
  return make_error(ErrorKind::invalid_input, flag + ": " + message, flag);
}

/// A whole-string integer (no sign but '-', no spaces), or nothing.
std::optional<long long> integer_in(const std::string& text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!(text[i] >= '0' && text[i] <= '9') && !(i == 0 && text[i] == '-' && text.size() > 1))
      return std::nullopt;
  }
  errno = 0;
  const long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno != 0) return std::nullopt;
  return value;
}

/// A whole-string finite decimal number such as 1.5 or -2e3, or nothing.
std::optional<double> number_in(const std::string& text) {
  if (text.empty() || text.size() > 64 || text.find_first_of(" \t\n") != std::string::npos)
    return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  // strtod also reads "inf", "nan", hex: only plain decimals count as numbers here.
  if (text.find_first_not_of("0123456789+-.eE") != std::string::npos) return std::nullopt;
  return value;
}

}  // namespace

void add_gateway_flags(CLI::App& command, GatewayFlags& flags) {
  command
      .add_option_function<std::string>(
          "--gateway", [&flags](const std::string& value) { flags.gateway = value; },
          "workers-ai: send through Cloudflare AI Gateway ACCOUNT/GATEWAY "
          "(https://gateway.ai.cloudflare.com/v1/ACCOUNT/GATEWAY/workers-ai/…; or give "
          "that URL as --host)")
      ->type_name("ACCOUNT/GATEWAY");
  command
      .add_option("--aig-cache-ttl", flags.cache_ttl_seconds,
                  "AI Gateway: cache this answer for SECONDS (cf-aig-cache-ttl, 60 to 2592000)")
      ->type_name("SECONDS")
      ->check(CLI::Range(60LL, 2592000LL));
  command.add_flag("--aig-skip-cache", flags.skip_cache,
                   "AI Gateway: do not answer from its cache (cf-aig-skip-cache)");
  command.add_flag("--aig-no-log-payload", flags.no_log_payload,
                   "AI Gateway: log usage but not the request and answer bodies "
                   "(cf-aig-collect-log-payload: false)");
  command
      .add_option("--aig-metadata", flags.metadata,
                  "AI Gateway: KEY=VALUE for its logs (cf-aig-metadata; at most 5; a number or "
                  "true/false is sent as one)")
      ->type_name("KEY=VALUE");
  command
      .add_option("--aig-token-file", flags.token_file,
                  "AI Gateway: an Authenticated Gateway's token, from FILE (cf-aig-authorization; "
                  "default: CF_AIG_TOKEN, else the Workers AI token)")
      ->type_name("FILE");
}

Result<std::pair<std::string, GatewayMetadataValue>> parse_metadata_flag(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    return flag_error("--aig-metadata", "'" + text + "' is not KEY=VALUE");
  }
  std::string key = text.substr(0, equals);
  std::string value = text.substr(equals + 1);
  if (value == "true" || value == "false") {
    return std::make_pair(std::move(key), GatewayMetadataValue(value == "true"));
  }
  // Typed only when JSON writes it back exactly as given: what the gateway logs is what was typed.
  if (auto integer = integer_in(value); integer && dump_json(Json(*integer)) == value) {
    return std::make_pair(std::move(key), GatewayMetadataValue(*integer));
  }
  if (auto number = number_in(value); number && dump_json(Json(*number)) == value) {
    return std::make_pair(std::move(key), GatewayMetadataValue(*number));
  }
  return std::make_pair(std::move(key), GatewayMetadataValue(std::move(value)));
}

Status apply_gateway_flags(const GatewayFlags& flags, const std::string& account,
                           const std::string& account_source, ClientOptions& options) {
  if (flags.gateway) {
    const std::string& gateway = *flags.gateway;
    const auto slash = gateway.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == gateway.size() ||
        gateway.find('/', slash + 1) != std::string::npos) {
      return flag_error("--gateway", "'" + gateway + "' is not ACCOUNT/GATEWAY");
    }
    const std::string named = gateway.substr(0, slash);
    if (!account.empty() && account != named) {
      return flag_error("--gateway", "its account '" + named + "' is not " + account_source +
                                         "'s '" + account + "': give one");
    }
    options.account_id = named;
    options.gateway.id = gateway.substr(slash + 1);
  }
  if (flags.cache_ttl_seconds > 0)
    options.gateway.cache_ttl = std::chrono::seconds(flags.cache_ttl_seconds);
  options.gateway.skip_cache = flags.skip_cache;
  options.gateway.collect_log_payload = !flags.no_log_payload;
  if (flags.metadata.size() > max_gateway_metadata) {
    return flag_error("--aig-metadata",
                      "at most " + std::to_string(max_gateway_metadata) +
                          " entries (AI Gateway keeps 5 and silently drops the rest), not " +
                          std::to_string(flags.metadata.size()));
  }
  for (const std::string& entry : flags.metadata) {
    auto parsed = parse_metadata_flag(entry);
    if (!parsed) return parsed.error();
    options.gateway.metadata.push_back(std::move(parsed).value());
  }
  return {};
}

}  // namespace clef::cli
