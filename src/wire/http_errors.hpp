// Internal: one documented mapping from (backend, HTTP status, headers, body) to an Error.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "clef/backend.hpp"
#include "clef/decision.hpp"
#include "clef/transport.hpp"
#include "util/json_text.hpp"
#include "util/redact.hpp"
#include "wire/retry_after.hpp"

namespace clef::detail {

/// The longest server text (message, code, request id) kept in an Error, in bytes.
inline constexpr std::size_t max_server_text = 1000;

/// The error for a non-2xx response. Reads every server's error body shape (Ollama, Workers AI,
/// TypeSafe, llama.cpp, Laya, ollaya, plain text) with type checks on every field, and picks the
/// kind from the status: 401/403/407 authentication; 404 not_found; 408 timeout; 429
/// rate_limited (Workers AI codes 3036 and 4006, the daily allocation: quota_exhausted); other
/// 4xx request_rejected; 5xx and 529 server_error; anything else invalid_response. `model`
/// and `url` (what was asked for) go into the hints: a 404 says whether the URL, the model or
/// the server's version is at fault. Every text taken from the response has `secret` redacted,
/// the whole body before any excerpt is cut.
Error error_from_response(Backend backend, const HttpResponse& response, const std::string& model,
                          const Secrets& secret = {}, std::string_view url = {});

/// The server's request id (x-typesafe-request-id, cf-ai-req-id, cf-ray or x-request-id),
/// with `secret` redacted and cut to max_server_text.
std::string request_id(const HttpResponse& response, const Secrets& secret = {});

/// What AI Gateway's headers say about the response (cf-aig-cache-status, cf-aig-log-id),
/// bounded and redacted like any server text; nullopt when it sent neither.
std::optional<GatewayReport> gateway_report(const HttpResponse& response,
                                            const Secrets& secret = {});

/// The error for a Workers AI envelope with `success: false` (whatever the HTTP status).
Error error_from_envelope(const Json& body, const HttpResponse& response,
                          const Secrets& secret = {});

/// True for the Workers AI codes that mean the account's daily allocation is used up.
bool is_daily_allocation_code(std::string_view code);

/// AI Gateway's "Spend limit exceeded" (2041, with 429): the gateway's budget, spent.
bool is_spend_limit_code(std::string_view code);

}  // namespace clef::detail
