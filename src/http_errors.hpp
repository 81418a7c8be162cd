// Internal: one documented mapping from (backend, HTTP status, headers, body) to an Error.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "clef/client.hpp"
#include "json_text.hpp"

namespace clef::detail {

/// The error for a non-2xx response. Reads every server's error body shape (Ollama, Workers AI,
/// TypeSafe, llama.cpp, Laya, ollaya, plain text) and picks the kind from the status:
/// 401/403 authentication; 404 not_found; 408 timeout; 429 rate_limited (Workers AI code 4006:
/// quota_exhausted); other 4xx request_rejected; 5xx and 529 server_error; anything else
/// invalid_response. `model` goes into the hints ("ollama pull clef-flash").
Error error_from_response(Backend backend, const HttpResponse& response, const std::string& model);

/// retry-after-ms (milliseconds), else Retry-After (seconds or an HTTP date), else nothing.
std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response);

/// The server's request id: x-typesafe-request-id, cf-ai-req-id, cf-ray or x-request-id.
std::string request_id(const HttpResponse& response);

/// The inner `result` of a Workers AI `{result, success, errors, messages}` envelope; a body
/// without the envelope is returned as it is, an unsuccessful one becomes an Error.
Result<Json> unwrap_workers_envelope(Json body, const HttpResponse& response);

}  // namespace clef::detail
