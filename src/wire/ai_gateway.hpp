// Internal: Cloudflare AI Gateway in front of Workers AI — its URL, the cf-aig-* request headers,
// what it says back about itself (cf-aig-cache-status, cf-aig-log-id), and the checks on what a
// caller asks of it.
#pragma once

#include <string>
#include <string_view>

#include "clef/options.hpp"
#include "clef/result.hpp"
#include "clef/transport.hpp"

namespace clef::detail {

/// Whether `options` send through a gateway: a gateway id, or a gateway URL as the base
/// (is_ai_gateway_url).
bool through_gateway(const ClientOptions& options);

/// The gateway's Workers AI root for `options.gateway.id`: {base}/{account}/{id}/workers-ai.
std::string gateway_root(const ClientOptions& options);

/// The gateway options checked: the id's characters, the cache TTL in [60 s, 30 days] (the
/// gateway's own bounds), at most max_gateway_metadata metadata entries with named keys and
/// finite numbers, and none of it without a gateway (or for another backend).
Status check_gateway_options(const ClientOptions& options);

/// The cf-aig-* headers `options` ask for (none without a gateway).
Headers gateway_headers(const ClientOptions& options);

/// The cf-aig-metadata header's value: a compact JSON object, entries in order.
std::string gateway_metadata_json(const AiGatewayOptions& gateway);

}  // namespace clef::detail
