#include "http_errors.hpp"

#include <cmath>
#include <ctime>

namespace clef::detail {
namespace {

struct ServerText {
  std::string message;
  std::string code;
  bool json = false;  ///< The body was JSON (an old Ollama's 404 is plain text).
};

std::string scalar_text(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number() || value.is_boolean()) return value.dump();
  return {};
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
    out += item.value("msg", std::string("invalid"));
  }
  return out;
}

ServerText read_json_error(const Json& body) {
  ServerText text;
  if (auto errors = body.find("errors"); errors != body.end() && errors->is_array()) {
    for (const auto& e : *errors) {  // Workers AI
      if (!e.is_object()) continue;
      if (!text.message.empty()) text.message += "; ";
      text.message += e.value("message", std::string());
      if (text.code.empty() && e.contains("code")) text.code = scalar_text(e["code"]);
    }
    if (!text.message.empty()) return text;
  }
  if (auto error = body.find("error"); error != body.end()) {
    if (error->is_string()) {  // Ollama; ollaya adds "code"
      text.message = error->get<std::string>();
      if (body.contains("code")) text.code = scalar_text(body["code"]);
    } else if (error->is_object()) {  // llama.cpp
      text.message = error->value("message", std::string());
      if (error->contains("type"))
        text.code = scalar_text((*error)["type"]);
      else if (error->contains("code"))
        text.code = scalar_text((*error)["code"]);
    }
    if (!text.message.empty()) return text;
  }
  if (auto detail = body.find("detail"); detail != body.end()) {
    if (detail->is_string()) {  // Laya
      text.message = detail->get<std::string>();
    } else if (detail->is_object()) {  // TypeSafe
      text.message = detail->value("message", std::string());
      for (const char* key : {"type", "error_type", "code"}) {
        if (detail->contains(key)) {
          text.code = scalar_text((*detail)[key]);
          break;
        }
      }
    } else if (detail->is_array()) {  // TypeSafe and FastAPI 422
      text.message = join_details(*detail);
    }
    if (!text.message.empty()) return text;
  }
  if (auto message = body.find("message"); message != body.end() && message->is_string()) {
    text.message = message->get<std::string>();
  }
  return text;
}

ServerText read_error_body(const std::string& body) {
  auto parsed = Json::parse(body, nullptr, false);
  const bool json = !parsed.is_discarded();
  if (json && parsed.is_object()) {
    ServerText text = read_json_error(parsed);
    text.json = true;
    return text;
  }
  // Plain text (an old Ollama's "404 page not found", a proxy's HTML): keep a short excerpt.
  std::string text = body.substr(0, 300);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return {text, {}, json};
}

std::string status_hint(Backend backend, int status, const ServerText& text,
                        const std::string& model) {
  switch (status) {
    case 401:
    case 403:
      if (backend == Backend::workers_ai) {
        return "Workers AI refused the token: check CLOUDFLARE_API_TOKEN (it needs Workers AI "
               "permission) and CLOUDFLARE_ACCOUNT_ID";
      }
      return "the server refused the credentials: check the API key";
    case 404:
      if (backend == Backend::ollama && !text.json) {
        return "this server has no /v1/systemone endpoint: upgrade Ollama to 0.35.1 or newer";
      }
      if (backend == Backend::ollama) {
        return "model \"" + model + "\" is not on this Ollama server: run `ollama pull " + model +
               "`";
      }
      return "the server has no such model or endpoint (model \"" + model + "\")";
    case 408:
      return "the server timed out waiting for the request";
    case 413:
      return "the request is too large for the server";
    case 429:
      if (text.code == "4006") {
        return "the Workers AI daily allocation is used up; retrying will not help today";
      }
      return "the server is rate limiting requests";
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
  if (status == 401 || status == 403) return ErrorKind::authentication;
  if (status == 404) return ErrorKind::not_found;
  if (status == 408) return ErrorKind::timeout;
  if (status == 429)
    return text.code == "4006" ? ErrorKind::quota_exhausted : ErrorKind::rate_limited;
  if (status >= 400 && status < 500) return ErrorKind::request_rejected;
  if (status >= 500 && status < 600) return ErrorKind::server_error;
  return ErrorKind::invalid_response;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

Error error_from_response(Backend backend, const HttpResponse& response, const std::string& model) {
  const ServerText text = read_error_body(response.body);
  Error error;
  error.kind = kind_for_status(response.status, text);
  error.http_status = response.status;
  error.server_message = text.message;
  error.server_code = text.code;
  error.request_id = request_id(response);
  error.retry_after = retry_after(response);
  error.message = status_hint(backend, response.status, text, model);
  if (!text.message.empty()) error.message += ": " + text.message;
  return error;
}

std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response) {
  using std::chrono::milliseconds;
  if (auto ms = parse_number(response.header("retry-after-ms"))) {
    return milliseconds(static_cast<long long>(*ms));
  }
  const std::string value = response.header("retry-after");
  if (value.empty()) return std::nullopt;
  if (auto seconds = parse_number(value)) {
    return milliseconds(static_cast<long long>(*seconds * 1000.0));
  }
  std::tm tm{};
  if (strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S", &tm) == nullptr) return std::nullopt;
  const auto when = std::chrono::system_clock::from_time_t(timegm(&tm));
  const auto wait =
      std::chrono::duration_cast<milliseconds>(when - std::chrono::system_clock::now());
  return wait.count() > 0 ? wait : milliseconds(0);
}

std::string request_id(const HttpResponse& response) {
  for (const char* name : {"x-typesafe-request-id", "cf-ai-req-id", "cf-ray", "x-request-id"}) {
    std::string value = response.header(name);
    if (!value.empty()) return value;
  }
  return {};
}

Result<Json> unwrap_workers_envelope(Json body, const HttpResponse& response) {
  if (!body.is_object() || !body.contains("success")) return body;
  if (body["success"] == true) {
    auto result = body.find("result");
    if (result == body.end() || !result->is_object()) {
      return make_error(ErrorKind::invalid_response,
                        "the Workers AI envelope has success: true but no result object", "result");
    }
    return std::move(*result);
  }
  Error error = make_error(ErrorKind::request_rejected, "Workers AI answered success: false");
  const ServerText text = read_json_error(body);
  error.http_status = response.status;
  error.server_message = text.message;
  error.server_code = text.code;
  error.request_id = request_id(response);
  if (!text.message.empty()) error.message += ": " + text.message;
  return error;
}

}  // namespace clef::detail
