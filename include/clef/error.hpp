// clef: the one error type every fallible call returns.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "clef/export.hpp"

namespace clef {

/// What went wrong, grouped by what a caller can do about it.
/// Each kind's comment says whether retrying the same request can help.
enum class ErrorKind {
  invalid_input,      ///< The request was rejected before sending. Retry: no, fix the input.
  connection_failed,  ///< No connection, reset, or a response cut short. Retry: yes.
  timeout,            ///< Connect or total timeout, or HTTP 408. Retry: yes.
  tls,                ///< Certificate or handshake failure. Retry: no.
  authentication,     ///< HTTP 401/403, or a token that cannot be sent (a control character,
                      ///< a space): missing or bad token. Retry: no.
  not_found,          ///< HTTP 404: model not pulled, or no System One endpoint; also AI
                      ///< Gateway's 400 with code 2001 (no such gateway). Retry: no.
  rate_limited,       ///< HTTP 429 the server expects to clear; also a 4xx with Workers AI's
                      ///< code 3021 (per-minute rate). Retry: yes, after Retry-After.
  quota_exhausted,    ///< A spent budget: HTTP 402, or a 429 for a used-up allocation (Workers
                      ///< AI 4006, 3036), AI Gateway's spend limit (2041) or OpenAI's
                      ///< insufficient_quota. Retry: no.
  request_rejected,  ///< Other HTTP 4xx (400, 413, 422...): the server refused the body. Retry: no.
  server_error,      ///< HTTP 5xx or 529 (overloaded). Retry: yes, except 501.
  invalid_response,  ///< The server answered 2xx with a body clef cannot use. Retry: no.
  cancelled,         ///< The caller cancelled the call. Retry: no.
  not_recorded,      ///< A replayed cassette has no recording of this request. Retry: no.
};

/// A stable lower_snake name for the kind, as printed in JSON output ("rate_limited").
CLEF_API const char* to_string(ErrorKind kind) noexcept;
/// The kind called `name` (as to_string spells it), or nullopt.
CLEF_API std::optional<ErrorKind> error_kind_named(std::string_view name) noexcept;

/// One failure, with everything known about where it happened.
/// Never contains an API token: messages are built from server text and clef's own words,
/// and server text is scrubbed of the client's token before it is stored.
struct CLEF_API Error {
  ErrorKind kind = ErrorKind::invalid_input;
  std::string message;         ///< clef's explanation, with the next step where there is one.
  int http_status = 0;         ///< 0 when no HTTP response was received.
  std::string server_message;  ///< The server's own error text, if it sent one.
  std::string server_code;     ///< The server's error code ("5021", "QUEUE_FULL"), if any.
  std::string request_id;      ///< x-typesafe-request-id / cf-ai-req-id / cf-ray, if any.
  std::string where;           ///< Question name, JSON path ("answers.team") or "byte 17".
  /// The proxy the request went through ("http://proxy:3128 (from https_proxy)", credentials
  /// removed), when one was used and the transfer failed.
  std::string proxy;
  /// How long the server asked us to wait (retry-after-ms or Retry-After), if it said.
  std::optional<std::chrono::milliseconds> retry_after;
  /// The base URL of the server that gave this error, when run_batch had several hosts.
  std::string host;

  /// True when sending the same request again may succeed (see ErrorKind).
  bool retryable() const noexcept;

  /// One line for people: "rate_limited (HTTP 429): <message> [server: ...] at <where>".
  std::string to_string() const;
};

/// Shorthand used throughout clef: an Error of `kind` with `message` and optional `where`.
CLEF_API Error make_error(ErrorKind kind, std::string message, std::string where = {});

}  // namespace clef
