// The implementation of http_errors.hpp: one documented mapping from (backend, HTTP status,
// headers, body) to an Error.
#include "wire/http_errors.hpp"

#include "util/ascii.hpp"

#include "clef/ollama.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "util/redact.hpp"
#include "util/url_path.hpp"
#include "wire/backend_wire.hpp"

namespace clef::detail {
/// OpenAI's 429 for an account out of quota or credits (not a rate limit: no retry helps).
constexpr std::string_view openai_quota_code = "insufficient_quota";
/// Workers AI's "inference request per min rate reached": a rate limit, whatever the status.
constexpr std::string_view workers_per_minute_code = "3021";

namespace {

/// At most `limit` bytes of `text` on one line, cut on a UTF-8 character boundary (and "..."): its
/// line breaks are spaces and other control characters '?', so a server's words stay inside the
/// message that quotes them (a "\nclef: ok" in an error body cannot print a line of its own).
std::string bounded(std::string text, std::size_t limit = max_server_text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';  // as the CLI shows it: something was there
  }
  if (text.size() <= limit) return text;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

std::string scalar_text(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  // A code written 2041.0 or 2.041e3 is the code 2041.
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::fabs(number) < 1e15 && number == std::floor(number))
      return std::to_string(static_cast<long long>(number));
  }
  if (value.is_number() || value.is_boolean()) return clef::dump_json(value);
  return {};
}

std::string scalar_field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? std::string() : scalar_text(*it);
}

std::string join_locations(const Json& loc) {
  std::string out;
  for (const auto& part : loc) {
    const std::string text = scalar_text(part);
    if (text == "body" && out.empty()) continue;
    if (!out.empty()) out += '.';
    out += text;
  }
  return out;
}

/// FastAPI-style [{loc, msg, type}, ...] -> "state: Field required; questions.x: ...".
std::string join_details(const Json& details) {
  std::string out;
  for (const auto& item : details) {
    if (!item.is_object()) continue;
    if (!out.empty()) out += "; ";
    if (auto loc = item.find("loc"); loc != item.end() && loc->is_array()) {
      out += join_locations(*loc) + ": ";
    }
    const std::string msg = string_field(item, "msg");
    out += msg.empty() ? "invalid" : msg;
    if (out.size() > max_server_text) break;
  }
  return out;
}

/// A spent budget's code anywhere in an error array wins over the first element's code: a
/// server may list a rate limit first and the spend limit after it.
void prefer_budget_code(const Json& errors, ServerText& text) {
  for (const auto& e : errors) {
    if (!e.is_object()) continue;
    const std::string code = scalar_field(e, "code");
    if (is_spend_limit_code(code) || is_daily_allocation_code(code)) {
      text.code = code;
      return;
    }
  }
}

ServerText read_json_error(const Json& body) {
  ServerText text;
  if (auto errors = body.find("errors"); errors != body.end() && errors->is_array()) {
    for (const auto& e : *errors) {  // Workers AI
      if (!e.is_object()) continue;
      const std::string message = string_field(e, "message");
      if (!message.empty()) {
        if (!text.message.empty()) text.message += "; ";
        text.message += message;
      }
      if (text.code.empty()) text.code = scalar_field(e, "code");
      if (text.message.size() > max_server_text) break;
    }
    prefer_budget_code(*errors, text);
    if (!text.message.empty()) return text;
  }
  if (auto error = body.find("error"); error != body.end()) {
    if (error->is_string()) {  // Ollama; ollaya adds "code"
      text.message = error->get<std::string>();
      text.code = scalar_field(body, "code");
    } else if (error->is_object()) {  // llama.cpp; OpenAI {message, type, param, code}
      text.message = string_field(*error, "message");
      text.code = scalar_field(*error, "type");
      // A used-up quota or spend limit may say so in either field: the code decides the kind.
      const std::string code = scalar_field(*error, "code");
      if (text.code.empty() || code == openai_quota_code || is_spend_limit_code(code))
        text.code = code;
    } else if (error->is_array()) {  // AI Gateway: {"success": false, "error": [{code, message}]}
      for (const auto& e : *error) {
        if (!e.is_object()) continue;
        if (text.code.empty()) text.code = scalar_field(e, "code");
        const std::string message = string_field(e, "message");
        if (message.empty()) continue;
        if (!text.message.empty()) text.message += "; ";
        text.message += message;
        if (text.message.size() > max_server_text) break;
      }
      prefer_budget_code(*error, text);
    }
    if (!text.message.empty()) return text;
  }
  if (auto detail = body.find("detail"); detail != body.end()) {
    if (detail->is_string()) {  // Laya
      text.message = detail->get<std::string>();
    } else if (detail->is_object()) {  // TypeSafe
      text.message = string_field(*detail, "message");
      for (const char* key : {"type", "error_type", "code"}) {
        text.code = scalar_field(*detail, key);
        if (!text.code.empty()) break;
      }
    } else if (detail->is_array()) {  // TypeSafe and FastAPI 422
      text.message = join_details(*detail);
    }
    if (!text.message.empty()) return text;
  }
  text.message = string_field(body, "message");
  return text;
}

/// AI Gateway's errors may carry their code beside `error` as `internalCode` (the spend limit's
/// 2041 among them): read when `error` gave none.
void read_internal_code(const Json& body, ServerText& text) {
  if (text.code.empty()) text.code = scalar_field(body, "internalCode");
}

ServerText read_error_body(const std::string& body, const Secrets& secret) {
  ServerText text;
  auto parsed = clef::parse_json(body, "the error body", ErrorKind::invalid_response);
  if (parsed && parsed->is_object()) {
    text = read_json_error(parsed.value());
    read_internal_code(parsed.value(), text);
    text.json = true;
  } else {
    // Plain text (an old Ollama's "404 page not found", a proxy's HTML): a short excerpt, cut
    // only after redaction so no part of a token straddling the cut survives.
    text.message = redact_all(body, secret);
    text.json = parsed.ok();
    while (!text.message.empty() && (text.message.back() == '\n' || text.message.back() == '\r' ||
                                     text.message.back() == ' '))
      text.message.pop_back();
    text.message = bounded(text.message, 300);
    return text;
  }
  text.message = bounded(redact_all(text.message, secret));
  text.code = bounded(redact_all(text.code, secret));
  return text;
}

/// A 404 has three causes a user can act on: the URL is wrong, the model is missing, or the
/// server predates System One. The body and the URL's path tell them apart.
std::string not_found_hint(const BackendWire& wire, const ServerText& text,
                           const std::string& model, std::string_view url) {
  const std::string_view path = url_path(url);
  const std::string at = url.empty() ? std::string("the server") : std::string(url);
  if (path.find("/v1/v1/") != std::string_view::npos) {
    return at + " repeats /v1: give --host as the base URL without /v1 (clef adds /v1/systemone)";
  }
  const bool plain_path = url.empty() || path == "/v1/systemone";
  return wire.not_found_hint(text, model, at, plain_path);
}

/// Why a 429 came: a budget spent (retrying will not help) or a rate limit.
std::string refusal_hint(const ServerText& text) {
  if (is_spend_limit_code(text.code)) {
    return "the AI Gateway spend limit is reached; retrying will not help until the limit "
           "is raised or its period resets";
  }
  if (is_daily_allocation_code(text.code)) {
    return "the Workers AI daily allocation is used up; retrying will not help before it renews "
           "at 00:00 UTC";
  }
  if (text.code == openai_quota_code) {
    return "the account's quota or credits are used up (insufficient_quota); retrying will "
           "not help until they are topped up";
  }
  return "the server is rate limiting requests";
}

std::string status_hint(const BackendWire& wire, int status, const ServerText& text,
                        const std::string& model, std::string_view url) {
  switch (status) {
    case 401:
    case 403:
      return wire.credentials_hint(status, text);
    case 400:
      if (auto hint = wire.bad_request_hint(text, model)) return std::move(*hint);
      break;
    case 404:
      return not_found_hint(wire, text, model, url);
    case 407:
      return "a proxy between clef and the server wants credentials: put them in the proxy URL "
             "(https_proxy=http://USER:PASSWORD@PROXY:PORT) or list the server in no_proxy";
    case 408:
      return "the server timed out waiting for the request";
    case 402:
      return "the account has no credit left (402 Payment Required); retrying will not help "
             "until it is topped up";
    case 413:
      return "the request is too large for the server";
    case 429:
      return refusal_hint(text);
    case 529:
      return "the server is overloaded";
    default:
      break;
  }
  if (status >= 500) return "the server failed to answer";
  if (status >= 400) return "the server rejected the request";
  return "unexpected HTTP status " + std::to_string(status);
}

ErrorKind kind_for_status(int status, const ServerText& text) {
  if (status == 401 || status == 403 || status == 407) return ErrorKind::authentication;
  if (status == 404) return ErrorKind::not_found;
  if (status == 408) return ErrorKind::timeout;
  // A provider's budget is a stop, never a wait: credit used up (402), AI Gateway's spend limit
  // (2041), Workers AI's daily allocation, OpenAI's insufficient_quota.
  if (status == 402) return ErrorKind::quota_exhausted;
  if (status == 429) {
    return is_daily_allocation_code(text.code) || is_spend_limit_code(text.code) ||
                   text.code == openai_quota_code
               ? ErrorKind::quota_exhausted
               : ErrorKind::rate_limited;
  }
  if (status >= 400 && status < 500 && text.code == workers_per_minute_code)
    return ErrorKind::rate_limited;
  if (status >= 400 && status < 500) return ErrorKind::request_rejected;
  if (status >= 500 && status < 600) return ErrorKind::server_error;
  return ErrorKind::invalid_response;
}

}  // namespace

bool is_daily_allocation_code(std::string_view code) {
  return code == "4006" || code == "3036";
}

bool is_spend_limit_code(std::string_view code) {
  return code == "2041";
}

Error error_from_response(Backend backend, const HttpResponse& response, const std::string& model,
                          const Secrets& secret, std::string_view url) {
  const ServerText text = read_error_body(response.body, secret);
  Error error;
  error.kind = kind_for_status(response.status, text);
  error.http_status = response.status;
  error.server_message = text.message;
  error.server_code = text.code;
  error.request_id = request_id(response, secret);
  error.retry_after = retry_after(response);
  const BackendWire& wire = wire_of(backend);
  error.message = status_hint(wire, response.status, text, model, url);
  if (response.status >= 300 && response.status < 400) {
    // Never followed (it could lead anywhere, credentials and all): said where it leads.
    const std::string location = bounded(redact_all(response.header("Location"), secret), 200);
    error.message = "the server redirects (HTTP " + std::to_string(response.status) + ")" +
                    (location.empty() ? std::string() : " to " + location) +
                    ", and clef follows no redirect: give --host as the server's own URL";
  }
  wire.amend_error(error, text, response.status, url);
  if (!text.message.empty()) error.message += ": " + text.message;
  return error;
}

std::optional<GatewayReport> gateway_report(const HttpResponse& response, const Secrets& secret) {
  // What clef reports as the gateway's own words: a status word (HIT, MISS) and an id (ULID-like).
  // Anything else from a header — white space only, control or invisible characters, a page of
  // text — is not the gateway speaking, and is left out.
  auto word = [&](const char* name, std::size_t max, bool digits) {
    const std::string value = response.header(name);
    if (value.empty() || value.size() > max) return std::string();
    for (const char c : value) {
      const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (digits && ((c >= '0' && c <= '9') || c == '-' || c == '_'));
      if (!ok) return std::string();
    }
    return redact_all(value, secret);
  };
  GatewayReport report;
  report.cache_status = word("cf-aig-cache-status", 16, false);
  report.log_id = word("cf-aig-log-id", 128, true);
  if (report.cache_status.empty() && report.log_id.empty()) return std::nullopt;
  return report;
}

std::string request_id(const HttpResponse& response, const Secrets& secret) {
  // AI Gateway's cf-aig-log-id last: behind a gateway, Workers AI's own id comes first.
  for (const char* name :
       {"x-typesafe-request-id", "cf-ai-req-id", "x-request-id", "cf-ray", "cf-aig-log-id"}) {
    std::string value = response.header(name);
    if (!value.empty()) return bounded(redact_all(value, secret));
  }
  return {};
}

Error error_from_envelope(const Json& body, const HttpResponse& response, const Secrets& secret) {
  ServerText text = read_json_error(body);
  read_internal_code(body, text);
  const ErrorKind kind = is_daily_allocation_code(text.code) || is_spend_limit_code(text.code)
                             ? ErrorKind::quota_exhausted
                         : text.code == workers_per_minute_code ? ErrorKind::rate_limited
                                                                : ErrorKind::request_rejected;
  Error error = make_error(kind, "Workers AI answered success: false");
  error.http_status = response.status;
  error.server_message = bounded(redact_all(text.message, secret));
  error.server_code = bounded(redact_all(text.code, secret));
  error.request_id = request_id(response, secret);
  if (!error.server_message.empty()) error.message += ": " + error.server_message;
  return error;
}

bool mentions_model(const ServerText& text) {
  return text.json && text.message.find("model") != std::string::npos;
}

// Every backend's hints but where its own object words them otherwise (a System One server's).

std::string BackendWire::not_found_hint(const ServerText& text, const std::string& model,
                                        const std::string& at, bool) const {
  if (mentions_model(text)) return "the server has no model \"" + model + "\"";
  return "nothing answers at " + at +
         ": give --host as the server's base URL (clef adds /v1/systemone)";
}

std::string BackendWire::credentials_hint(int, const ServerText&) const {
  return "the server refused the credentials: check the API key";
}

std::optional<std::string> BackendWire::bad_request_hint(const ServerText&,
                                                         const std::string&) const {
  return std::nullopt;
}

void BackendWire::amend_error(Error&, const ServerText&, int, std::string_view) const {}

}  // namespace clef::detail
