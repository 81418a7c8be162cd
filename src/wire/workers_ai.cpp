// The implementation of workers_ai.hpp: what is particular to Cloudflare Workers AI — its URLs, its
// model names and the {result, success, errors, messages} envelope around every answer.
#include "wire/workers_ai.hpp"

#include "wire/http_errors.hpp"

namespace clef::detail {

std::string workers_api_root(std::string base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  const auto scheme = base_url.find("://");
  const auto path = base_url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (path == std::string::npos) base_url += "/client/v4";
  return base_url;
}

Result<WorkersModel> workers_model(const std::string& model) {
  std::string name = model;
  const auto tag = name.find(':');
  if (tag != std::string::npos) {
    if (name.compare(tag, std::string::npos, ":latest") != 0) {
      return make_error(ErrorKind::invalid_input,
                        "Workers AI models have no tags: use \"" + name.substr(0, tag) +
                            "\", not \"" + model + "\"",
                        "model");
    }
    name.resize(tag);
  }
  if (name.empty()) return make_error(ErrorKind::invalid_input, "no model named", "model");
  const auto slash = name.rfind('/');
  WorkersModel names;
  names.path = name.rfind('@', 0) == 0 ? name : "@cf/cloudflare/" + name;
  names.body = slash == std::string::npos ? name : name.substr(slash + 1);
  return names;
}

Result<Json> unwrap_workers_envelope(Json body, const HttpResponse& response,
                                     const Secrets& secret) {
  if (!body.is_object() || !body.contains("success")) return body;
  if (body["success"] == true) {
    auto result = body.find("result");
    if (result == body.end() || !result->is_object()) {
      return make_error(ErrorKind::invalid_response,
                        "the Workers AI envelope has success: true but no result object", "result");
    }
    return std::move(*result);
  }
  return error_from_envelope(body, response, secret);
}

}  // namespace clef::detail
