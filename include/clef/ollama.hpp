// clef: the parts of Ollama's own API a System One user needs — which version is running,
// which models are pulled, and which of them can decide.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clef/export.hpp"
#include "clef/options.hpp"
#include "clef/result.hpp"

namespace clef {

/// A pulled model as /api/tags and /api/show describe it.
struct CLEF_API OllamaModel {
  std::string name;    ///< "clef-flash:latest"
  std::string digest;  ///< The content digest from /api/tags; changes when the tag moves.
  std::vector<std::string> capabilities;  ///< From /api/show: "decision", "vision", ...
  std::string format;  ///< From /api/show's details: "gguf", "safetensors", "mlx" (or empty).
  /// True when the model lists "decision": /v1/systemone refuses the others with HTTP 400.
  bool can_decide() const noexcept;
  /// False for an MLX or Safetensors build (by its format or its tag): Ollama refuses those on
  /// /v1/systemone with HTTP 400 even when they list "decision"; the default tag works.
  bool serves_systemone() const noexcept;
};

/// True for a tag naming an MLX or Safetensors build ("clef-flash:mlx-q4",
/// "clef-flash:9b-safetensors"), which Ollama does not serve on /v1/systemone.
CLEF_API bool is_mlx_or_safetensors_tag(std::string_view model) noexcept;

/// Ollama's /api/version, /api/tags and /api/show, over the same Transport, timeouts, CA and
/// error mapping as Client (a 404 for an unknown model is ErrorKind::not_found).
///
///     auto ollama = clef::OllamaApi::create(clef::ClientOptions::from_environment(clef::Backend::ollama));
///     auto version = ollama ? ollama->version() : clef::Result<std::string>(ollama.error());
///     bool fresh = version && clef::version_at_least(version.value(), clef::minimum_ollama_version);
class CLEF_API OllamaApi {
 public:
  /// Uses options.base_url (empty: OLLAMA_HOST), the timeouts, ca_file, transport and cancel.
  static Result<OllamaApi> create(ClientOptions options);

  Result<std::string> version() const;
  /// The pulled models with their digests (capabilities are empty: ask show()).
  Result<std::vector<OllamaModel>> models() const;
  /// One model with its capabilities; ErrorKind::not_found when it is not pulled.
  Result<OllamaModel> show(const std::string& name) const;

  const std::string& base_url() const noexcept;

 private:
  struct Impl;
  explicit OllamaApi(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> m_impl;
};

/// True when version "a.b.c" is at least `minimum` ("0.35.1"). A pre-release tail ("-rc1")
/// and missing parts count as zero; text that is not a version is never new enough.
CLEF_API bool version_at_least(std::string_view version, std::string_view minimum);

}  // namespace clef
