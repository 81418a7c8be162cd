// The implementation of clef/error.hpp: the one error type every fallible call returns.
#include "clef/error.hpp"

#include "clef/result.hpp"

namespace clef {

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input:
      return "invalid_input";
    case ErrorKind::connection_failed:
      return "connection_failed";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::tls:
      return "tls";
    case ErrorKind::authentication:
      return "authentication";
    case ErrorKind::not_found:
      return "not_found";
    case ErrorKind::rate_limited:
      return "rate_limited";
    case ErrorKind::quota_exhausted:
      return "quota_exhausted";
    case ErrorKind::request_rejected:
      return "request_rejected";
    case ErrorKind::server_error:
      return "server_error";
    case ErrorKind::invalid_response:
      return "invalid_response";
    case ErrorKind::cancelled:
      return "cancelled";
    case ErrorKind::not_recorded:
      return "not_recorded";
  }
  return "unknown";
}

std::optional<ErrorKind> error_kind_named(std::string_view name) noexcept {
  for (int kind = 0; kind <= static_cast<int>(ErrorKind::not_recorded); ++kind) {
    if (name == to_string(static_cast<ErrorKind>(kind))) return static_cast<ErrorKind>(kind);
  }
  return std::nullopt;
}

bool Error::retryable() const noexcept {
  switch (kind) {
    case ErrorKind::connection_failed:
    case ErrorKind::timeout:
    case ErrorKind::rate_limited:
      return true;
    case ErrorKind::server_error:
      // 501 Not Implemented (llmman: an engine it cannot serve) will not change on retry.
      return http_status != 501;
    default:
      return false;
  }
}

std::string Error::to_string() const {
  std::string text = clef::to_string(kind);
  if (http_status != 0) text += " (HTTP " + std::to_string(http_status) + ")";
  text += ": " + message;
  if (!server_message.empty() && message.find(server_message) == std::string::npos) {
    text += " [server: " + server_message + "]";
  }
  if (!where.empty()) text += " at " + where;
  if (!request_id.empty()) text += " (request id " + request_id + ")";
  return text;
}

Error make_error(ErrorKind kind, std::string message, std::string where) {
  Error error;
  error.kind = kind;
  error.message = std::move(message);
  error.where = std::move(where);
  return error;
}

BadResultAccess::BadResultAccess(const Error& error)
    : std::logic_error("clef: value() of a failed Result: " + error.to_string()) {}

}  // namespace clef
