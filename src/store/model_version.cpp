// clef::resolve_model_version (clef/cache.hpp): what a model's cached answers are keyed by.
#include "clef/backend.hpp"
#include "clef/cache.hpp"
#include "clef/ollama.hpp"

namespace clef {

Result<ModelVersion> resolve_model_version(const ClientOptions& options, const std::string& model) {
  ModelVersion resolved;
  resolved.version = model;
  if (!traits_of(options.backend).tagged_models) {
    if (is_moving_alias(model)) resolved.ttl = moving_alias_ttl;
    return resolved;
  }
  auto ollama = OllamaApi::create(options);
  auto models = ollama ? ollama->models() : Result<std::vector<OllamaModel>>(ollama.error());
  const std::string where = url_without_credentials(options.base_url) + "/api/tags";
  if (!models) {
    Error error = models.error();
    error.message =
        "cannot learn the digest of " + model + " from " + where + " (" + error.message + ")";
    return error;
  }
  for (const auto& listed : models.value()) {
    if (listed.name == model || listed.name == model + ":latest") {
      // No digest (none, null, not a string): a key on the name alone would serve a re-pulled
      // model the old one's answers.
      if (listed.digest.empty()) {
        return make_error(ErrorKind::invalid_response, "cannot learn the digest of " + model +
                                                           " from " + where +
                                                           " (it lists the model without one)");
      }
      resolved.version = listed.name + "@" + listed.digest;
      return resolved;
    }
  }
  return make_error(ErrorKind::not_found,
                    "cannot learn the digest of " + model + " from " + where + " (no such model)");
}

}  // namespace clef
