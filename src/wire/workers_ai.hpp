// Internal: what is particular to Cloudflare Workers AI — its URLs, its model names and the
// {result, success, errors, messages} envelope around every answer.
#pragma once

#include <string>
#include <string_view>

#include "clef/result.hpp"
#include "clef/transport.hpp"
#include "util/json_text.hpp"
#include "util/redact.hpp"

namespace clef::detail {

/// A base URL as the user gave it ("https://api.cloudflare.com", "…/client/v4/", a local
/// test server) made into the API root: "/client/v4" is added to a URL with no path; a URL
/// with a path (a gateway) is kept as it is.
std::string workers_api_root(std::string base_url);

/// The model as Workers AI names it: in the URL "@cf/cloudflare/clef-flash", in the body
/// "clef-flash". An Ollama tag ":latest" is dropped (it means the same model); any other tag
/// is refused, since Workers AI models have none.
struct WorkersModel {
  std::string path;
  std::string body;
};
Result<WorkersModel> workers_model(const std::string& model);

/// The inner `result` of a Workers AI envelope; a body without the envelope is returned as it
/// is, an unsuccessful one becomes an Error (see error_from_envelope in http_errors.hpp).
Result<Json> unwrap_workers_envelope(Json body, const HttpResponse& response,
                                     const Secrets& secret = {});

}  // namespace clef::detail
