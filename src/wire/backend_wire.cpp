// The implementation of backend_wire.hpp's one switch: a Backend to its object. The objects'
// shared defaults (the System One form and wording) are in the file of each concern.
#include "wire/backend_wire.hpp"

#include <cstdlib>

#include "util/ascii.hpp"

namespace clef::detail {

const BackendWire& wire_of(Backend backend) {
  switch (backend) {
    case Backend::workers_ai:
      return workers_ai_wire();
    case Backend::systemone:
      return systemone_wire();
    case Backend::openai:
      return openai_wire();
    case Backend::ollama:
      break;
  }
  return ollama_wire();
}

void BackendWire::read_environment(ClientOptions& options) const {
  if (const char* variable = traits().token_variable)
    options.api_token = std::string(trimmed_space(env(variable)));
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace clef::detail
