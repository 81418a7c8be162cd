// The AI Gateway flags of the Workers AI backend: --gateway ACCOUNT/GATEWAY and the cf-aig-*
// headers (--aig-cache-ttl, --aig-skip-cache, --aig-no-log-payload, --aig-metadata k=v,
// --aig-token-file).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clef/options.hpp"
#include "clef/result.hpp"

namespace clef::cli {

struct GatewayFlags {
  std::optional<std::string> gateway;  ///< ACCOUNT/GATEWAY (given empty: refused, not ignored)
  long long cache_ttl_seconds = 0;
  bool skip_cache = false;
  bool no_log_payload = false;
  std::vector<std::string> metadata;  ///< k=v, in order
  std::string token_file;             ///< --aig-token-file: an Authenticated Gateway's token
};

void add_gateway_flags(CLI::App& command, GatewayFlags& flags);

/// The flags into `options.gateway` (and --gateway's account into `options.account_id`).
/// --aig-metadata past 5 entries, a value that is no k=v, a --gateway that is not
/// ACCOUNT/GATEWAY, or one whose account differs from the account already given (`account`,
/// from `account_source`: --account-id or CLOUDFLARE_ACCOUNT_ID) is refused here, naming the
/// flag, before anything is sent.
Status apply_gateway_flags(const GatewayFlags& flags, const std::string& account,
                           const std::string& account_source, ClientOptions& options);

/// "team=support" → {"team", "support"}; "ticket=42" → 42; "vip=true" → true; "x=1.5" → 1.5.
/// A number only when JSON writes it back as typed ("00042", "+1", "-0", "1e-400" and
/// "99999999999999999999" stay text), so the gateway logs what was given.
Result<std::pair<std::string, GatewayMetadataValue>> parse_metadata_flag(const std::string& text);

}  // namespace clef::cli
