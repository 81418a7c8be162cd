#include "ollama_api.hpp"

#include "clef/json.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

std::tuple<int, int, int> parse_version(const std::string& text) {
  int major = 0, minor = 0, patch = 0;
  std::sscanf(text.c_str(), "%d.%d.%d", &major, &minor, &patch);
  return {major, minor, patch};
}

}  // namespace

bool OllamaModel::decision() const {
  return std::find(capabilities.begin(), capabilities.end(), "decision") != capabilities.end();
}

bool version_at_least(const std::string& version, const std::string& minimum) {
  return parse_version(version) >= parse_version(minimum);
}

OllamaApi::OllamaApi(std::string base_url, std::chrono::milliseconds timeout)
    : m_base_url(std::move(base_url)), m_timeout(timeout), m_transport(make_curl_transport()) {}

Result<Json> OllamaApi::call(const std::string& method, const std::string& path,
                             const std::string& body) const {
  HttpRequest request;
  request.method = method;
  request.url = m_base_url + path;
  request.body = body;
  request.total_timeout = m_timeout;
  request.connect_timeout = std::min(m_timeout, std::chrono::milliseconds(10'000));
  if (!body.empty()) request.headers = {{"Content-Type", "application/json"}};
  auto response = m_transport->send(request);
  if (!response) return response.error();
  auto parsed = parse_json(response->body, "the answer of " + path, ErrorKind::invalid_response);
  const Json json = parsed ? std::move(parsed).value() : Json(Json::value_t::discarded);
  if (response->status == 404) {
    Error error = make_error(ErrorKind::not_found, "not found", request.url);
    error.http_status = 404;
    if (json.is_object() && json.contains("error") && json["error"].is_string()) {
      error.server_message = json["error"].get<std::string>();
    }
    return error;
  }
  if (response->status < 200 || response->status > 299) {
    Error error =
        make_error(response->status >= 500 ? ErrorKind::server_error : ErrorKind::request_rejected,
                   "HTTP " + std::to_string(response->status), request.url);
    error.http_status = response->status;
    return error;
  }
  if (json.is_discarded()) return make_error(ErrorKind::invalid_response, "not JSON", request.url);
  return json;
}

Result<std::string> OllamaApi::version() const {
  auto json = call("GET", "/api/version", "");
  if (!json) return json.error();
  if (!json->contains("version") || !(*json)["version"].is_string()) {
    return make_error(ErrorKind::invalid_response, "no version in the answer", "/api/version");
  }
  return (*json)["version"].get<std::string>();
}

Result<std::vector<std::string>> OllamaApi::model_names() const {
  auto json = call("GET", "/api/tags", "");
  if (!json) return json.error();
  std::vector<std::string> names;
  if (json->contains("models") && (*json)["models"].is_array()) {
    for (const auto& model : (*json)["models"]) {
      if (model.is_object() && model.contains("name") && model["name"].is_string()) {
        names.push_back(model["name"].get<std::string>());
      }
    }
  }
  return names;
}

Result<OllamaModel> OllamaApi::show(const std::string& name) const {
  auto json = call("POST", "/api/show", Json({{"model", name}}).dump());
  if (!json) return json.error();
  OllamaModel model{name, {}};
  if (json->contains("capabilities") && (*json)["capabilities"].is_array()) {
    for (const auto& c : (*json)["capabilities"]) {
      if (c.is_string()) model.capabilities.push_back(c.get<std::string>());
    }
  }
  return model;
}

}  // namespace clef::cli
