// The implementation of http_errors.hpp: one documented mapping from (backend, HTTP status,
// headers, body) to an Error.
#include "wire/http_errors.hpp"

#include "util/ascii.hpp"
#include "util/http_date.hpp"

#include "clef/ollama.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "util/redact.hpp"
#include "util/url_path.hpp"

namespace clef::detail {
/// OpenAI's 429 for an account out of quota or credits (not a rate limit: no retry helps).
constexpr std::string_view openai_quota_code = "insufficient_quota";
/// Workers AI's "inference request per min rate reached": a rate limit, whatever the status.
constexpr std::string_view workers_per_minute_code = "3021";

namespace {

struct ServerText {
  std::string message;
  std::string code;
  bool json = false;  ///< The body was JSON (an old Ollama's 404 is plain text).
};

/// At most max_server_text bytes of `text`, cut on a UTF-8 character boundary.
std::string bounded(std::string text) {
  if (text.size() <= max_server_text) return text;
  std::size_t cut = max_server_text;
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
    if (text.message.size() > 300) text.message = bounded(text.message.substr(0, 300));
    return text;
  }
  text.message = bounded(redact_all(text.message, secret));
  text.code = bounded(redact_all(text.code, secret));
  return text;
}

bool mentions_model(const ServerText& text) {
  return text.json && text.message.find("model") != std::string::npos;
}

/// A 404 has three causes a user can act on: the URL is wrong, the model is missing, or the
/// server predates System One. The body and the URL's path tell them apart.
std::string not_found_hint(Backend backend, const ServerText& text, const std::string& model,
                           std::string_view url) {
  const std::string_view path = url_path(url);
  const std::string at = url.empty() ? std::string("the server") : std::string(url);
  if (path.find("/v1/v1/") != std::string_view::npos) {
    return at + " repeats /v1: give --host as the base URL without /v1 (clef adds /v1/systemone)";
  }
  const bool plain_path = url.empty() || path == "/v1/systemone";
  switch (backend) {
    case Backend::ollama:
      if (mentions_model(text)) {
        return "model \"" + model + "\" is not on this Ollama server: run `ollama pull " + model +
               "`";
      }
      if (!text.json && plain_path) {
        return "this server has no /v1/systemone endpoint: upgrade Ollama to " +
               std::string(minimum_ollama_version) + " or newer (`clef doctor` checks)";
      }
      return "nothing answers at " + at +
             ": give --host as Ollama's base URL, e.g. http://127.0.0.1:11434";
    case Backend::workers_ai:
      if (mentions_model(text)) {
        return "Workers AI has no model \"" + model +
               "\" (clef-flash and clef are decision models)";
      }
      return "Workers AI has no such route (" + at +
             "): check the account id and --host (the API root, "
             "https://api.cloudflare.com/client/v4)";
    case Backend::openai:
      if (mentions_model(text)) return "the server has no decisions model \"" + model + "\"";
      return "nothing answers at " + at +
             ": give --host as the API's base URL (https://api.openai.com/v1; clef adds "
             "/decisions)";
    case Backend::systemone:
      break;
  }
  if (mentions_model(text)) return "the server has no model \"" + model + "\"";
  return "nothing answers at " + at +
         ": give --host as the server's base URL (clef adds /v1/systemone)";
}

/// What to check when the server refused the credentials (401, 403).
std::string credentials_hint(Backend backend, int status, const ServerText& text) {
  if (backend == Backend::workers_ai && text.code == "2009") {
    return "AI Gateway refused a token: an Authenticated Gateway's (cf-aig-authorization: "
           "CF_AIG_TOKEN or --aig-token-file, else the Workers AI token), or the Workers AI "
           "token it passes on (CLOUDFLARE_API_TOKEN)";
  }
  if (backend == Backend::workers_ai) {
    return "Workers AI refused the token: check CLOUDFLARE_API_TOKEN (it needs Workers AI "
           "permission) and CLOUDFLARE_ACCOUNT_ID";
  }
  if (backend == Backend::openai) {
    return status == 403 ? "the server refused this request for this key (OpenAI's 403: a "
                           "country, region or project it does not serve, or a model the "
                           "key may not use)"
                         : "the server refused the key: check OPENAI_API_KEY (or "
                           "--api-token-file)";
  }
  return "the server refused the credentials: check the API key";
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

std::string status_hint(Backend backend, int status, const ServerText& text,
                        const std::string& model, std::string_view url) {
  switch (status) {
    case 401:
    case 403:
      return credentials_hint(backend, status, text);
    case 400:
      if (backend == Backend::ollama &&
          (is_mlx_or_safetensors_tag(model) || text.message.find("MLX") != std::string::npos ||
           text.message.find("Safetensors") != std::string::npos)) {
        return "Ollama cannot serve \"" + model +
               "\" on /v1/systemone (MLX and Safetensors builds are not supported there): use "
               "the default tag, e.g. `ollama pull clef-flash` and --model clef-flash";
      }
      break;
    case 404:
      return not_found_hint(backend, text, model, url);
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

/// A non-negative decimal number as retry-after-ms writes one ("1500", "1500.5"): digits, and
/// at most one '.' between digits; nothing strtod would take besides (hex, exponents, inf).
std::optional<double> parse_number(const std::string& text) {
  const auto dot = text.find('.');
  const auto is_digits = [](std::string_view part) {
    return !part.empty() &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string_view whole = std::string_view(text).substr(0, dot);
  if (!is_digits(whole)) return std::nullopt;
  if (dot != std::string::npos && !is_digits(std::string_view(text).substr(dot + 1)))
    return std::nullopt;
  return std::strtod(text.c_str(), nullptr);
}

/// `count` units of `unit_ms` milliseconds, saturated to max_retry_after_value (no overflow).
std::chrono::milliseconds saturated_ms(double count, double unit_ms) {
  const double ms = count * unit_ms;
  const auto cap = static_cast<double>(max_retry_after_value.count());
  return std::chrono::milliseconds(static_cast<long long>(ms >= cap ? cap : ms));
}

}  // namespace

constexpr std::string_view gateway_not_configured_code = "2001";

namespace {

/// "\"support\"" for …/v1/ACCOUNT/support/workers-ai/…: the segment before "/workers-ai/".
std::string gateway_named_in(std::string_view url) {
  const auto end = url.find("/workers-ai/");
  if (end == std::string_view::npos || end == 0) return "of that name";
  const auto start = url.rfind('/', end - 1);
  if (start == std::string_view::npos) return "of that name";
  return "\"" + std::string(url.substr(start + 1, end - start - 1)) + "\"";
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
  error.message = status_hint(backend, response.status, text, model, url);
  if (backend == Backend::workers_ai && response.status == 400 &&
      text.code == gateway_not_configured_code) {
    // AI Gateway's "Please configure AI Gateway" (sent with 400): no gateway of that name on the
    // account. Only on a 400: a 429 or 5xx quoting the code keeps its status's kind and retry.
    error.kind = ErrorKind::not_found;
    error.message = "AI Gateway has no gateway " + gateway_named_in(url) +
                    " on this account: create it (dashboard, AI > AI Gateway) or check its name";
  }
  if (!text.message.empty()) error.message += ": " + text.message;
  return error;
}

std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response) {
  using std::chrono::milliseconds;
  const std::int64_t cap_ms = max_retry_after_value.count();
  // retry-after-ms (OpenAI's SDKs, not an RFC): a whole or decimal number of milliseconds.
  const std::string ms_header = response.header("retry-after-ms");
  if (auto ms = parse_number(std::string(trimmed_space(ms_header)))) return saturated_ms(*ms, 1);
  // RFC 9110 §10.2.3: delay-seconds (digits only: "0x10" and "1e3" are not) or an HTTP-date.
  const std::string header = response.header("retry-after");
  const std::string_view value = trimmed_space(header);
  if (value.empty()) return std::nullopt;
  if (auto seconds = parse_delay_seconds(value, cap_ms / 1000))
    return milliseconds(*seconds * 1000);
  const auto when = parse_http_date(value);
  if (!when) return std::nullopt;
  // Whole seconds, compared in 64 bits: a date in 9999 waits the cap, never overflows a clock.
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  const std::int64_t wait = std::clamp<std::int64_t>(*when - now, 0, cap_ms / 1000);
  return milliseconds(wait * 1000);
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

}  // namespace clef::detail
