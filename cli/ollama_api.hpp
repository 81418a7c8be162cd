// The few Ollama endpoints `clef models` and `clef doctor` read: /api/version, /api/tags,
// /api/show.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "clef/client.hpp"

namespace clef::cli {

struct OllamaModel {
  std::string name;
  std::vector<std::string> capabilities;
  bool decision() const;
};

class OllamaApi {
 public:
  OllamaApi(std::string base_url, std::chrono::milliseconds timeout);
  Result<std::string> version() const;
  Result<std::vector<std::string>> model_names() const;
  /// The model's capabilities; not_found when it is not pulled.
  Result<OllamaModel> show(const std::string& name) const;
  const std::string& base_url() const { return m_base_url; }

 private:
  Result<nlohmann::ordered_json> call(const std::string& method, const std::string& path,
                                      const std::string& body) const;
  std::string m_base_url;
  std::chrono::milliseconds m_timeout;
  std::shared_ptr<Transport> m_transport;
};

/// True when version "a.b.c" is at least `minimum` ("0.35.1"); pre-release tails are ignored.
bool version_at_least(const std::string& version, const std::string& minimum);

}  // namespace clef::cli
