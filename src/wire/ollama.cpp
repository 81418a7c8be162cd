// The implementation of clef/ollama.hpp: the parts of Ollama's own API a System One user needs —
// which version is running, which models are pulled, and which of them can decide.
#include "clef/ollama.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "util/ascii.hpp"
#include "util/json_text.hpp"
#include "wire/http_errors.hpp"
#include "wire/options_check.hpp"

namespace clef {
namespace {

/// "0.35.1-rc2" → {0, 35, 1}; nullopt when it does not start with a digit.
std::optional<std::array<long, 3>> version_parts(std::string_view text) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  std::array<long, 3> parts{0, 0, 0};
  std::size_t i = 0;
  for (auto& part : parts) {
    long value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && value < 1'000'000'000) {
      value = value * 10 + (text[i++] - '0');
    }
    part = value;
    if (i >= text.size() || text[i] != '.') break;
    ++i;
  }
  return parts;
}

std::vector<std::string> strings_of(const detail::Json& object, const char* key) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const auto& item : *it) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

bool OllamaModel::can_decide() const noexcept {
  return std::find(capabilities.begin(), capabilities.end(), "decision") != capabilities.end();
}

bool is_mlx_or_safetensors_tag(std::string_view model) noexcept {
  const auto colon = model.rfind(':');
  if (colon == std::string_view::npos) return false;
  const std::string tag = detail::ascii_lower(model.substr(colon + 1));
  return tag.find("mlx") != std::string::npos || tag.find("safetensors") != std::string::npos;
}

bool OllamaModel::serves_systemone() const noexcept {
  const std::string lower = detail::ascii_lower(format);
  return lower != "mlx" && lower != "safetensors" && !is_mlx_or_safetensors_tag(name);
}

bool version_at_least(std::string_view version, std::string_view minimum) {
  auto have = version_parts(version);
  auto want = version_parts(minimum);
  return have && want && *have >= *want;
}

struct OllamaApi::Impl : detail::Connection {
  /// One call; a non-2xx answer goes through the same mapping as a decision's, and a 2xx one
  /// must be a JSON object.
  Result<detail::Json> call(const char* method, const std::string& path, std::string body,
                            const std::string& model) const {
    HttpRequest request;
    request.method = method;
    request.url = base_url + path;
    request.headers = {{"Accept", "application/json"}, {"User-Agent", detail::user_agent()}};
    if (!body.empty()) request.headers.emplace_back("Content-Type", "application/json");
    if (!authorization.empty()) request.headers.emplace_back("Authorization", authorization);
    request.body = std::move(body);
    detail::apply_transfer_options(options, request);
    auto response = transport->send(request);
    if (!response) return response.error();
    if (response->status < 200 || response->status > 299) {
      Error error = detail::error_from_response(Backend::ollama, response.value(), model, secret,
                                                request.url);
      if (error.where.empty()) error.where = request.url;  // which of the API's calls said it
      return error;
    }
    auto json =
        clef::parse_json(response->body, "the answer of " + path, ErrorKind::invalid_response);
    if (!json) return json.error();
    if (!json->is_object()) {
      return make_error(ErrorKind::invalid_response, "the answer is not a JSON object",
                        request.url);
    }
    return json;
  }
};

OllamaApi::OllamaApi(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}

Result<OllamaApi> OllamaApi::create(ClientOptions options) {
  options.backend = Backend::ollama;
  auto connection = detail::connection_from(std::move(options));
  if (!connection) return connection.error();
  auto impl = std::make_shared<Impl>();
  static_cast<detail::Connection&>(*impl) = std::move(connection).value();
  return OllamaApi(std::move(impl));
}

const std::string& OllamaApi::base_url() const noexcept {
  return m_impl->base_url;
}

Result<std::string> OllamaApi::version() const {
  auto json = m_impl->call("GET", "/api/version", {}, {});
  if (!json) return json.error();
  std::string version = detail::string_field(json.value(), "version");
  if (version.empty()) {
    return make_error(ErrorKind::invalid_response, "no version in the answer", "/api/version");
  }
  return version;
}

Result<std::vector<OllamaModel>> OllamaApi::models() const {
  auto json = m_impl->call("GET", "/api/tags", {}, {});
  if (!json) return json.error();
  std::vector<OllamaModel> models;
  auto list = json->find("models");
  // Ollama lists none as "models": []; an answer without the list is not an empty one.
  if (list == json->end() || !list->is_array()) {
    return make_error(ErrorKind::invalid_response, "the answer has no \"models\" list",
                      "/api/tags");
  }
  for (const auto& entry : *list) {
    OllamaModel model;
    model.name = detail::string_field(entry, "name");
    model.digest = detail::string_field(entry, "digest");
    if (!model.name.empty()) models.push_back(std::move(model));
  }
  return models;
}

Result<OllamaModel> OllamaApi::show(const std::string& name) const {
  std::string body = "{\"model\":";
  if (auto s = detail::append_json_string(body, name, "model"); !s) return s.error();
  body += '}';
  auto json = m_impl->call("POST", "/api/show", std::move(body), name);
  if (!json) return json.error();
  OllamaModel model;
  model.name = name;
  // An older Ollama says nothing of capabilities; a value that is not a list is not "none".
  if (auto listed = json->find("capabilities"); listed != json->end() && !listed->is_array()) {
    return make_error(ErrorKind::invalid_response, "\"capabilities\" is not a list", "/api/show");
  }
  model.capabilities = strings_of(json.value(), "capabilities");
  if (auto details = json->find("details"); details != json->end() && details->is_object())
    model.format = detail::string_field(*details, "format");
  return model;
}

}  // namespace clef
