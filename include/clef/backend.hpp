// clef: the kinds of server clef speaks to, their names, environment variables and defaults.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace clef {

enum class Backend {
  ollama,      ///< Ollama >= 0.35.1: {base}/v1/systemone, no key, raw base64 images.
  workers_ai,  ///< Cloudflare Workers AI: per-account URL, Bearer token, result envelope.
  systemone,   ///< Any other System One server by base URL, optional Bearer key.
};

/// "ollama", "workers-ai" or "systemone": the names the CLI and the environment use.
const char* to_string(Backend backend) noexcept;
/// The backend called `name` (as to_string spells it), or nullopt.
std::optional<Backend> backend_named(std::string_view name) noexcept;

/// The environment variable the API token is read from: CLOUDFLARE_API_TOKEN (Workers AI),
/// CLEF_API_KEY (systemone), or nullptr (Ollama takes none).
const char* token_variable(Backend backend) noexcept;
/// The environment variable of Workers AI's account id.
inline constexpr const char* workers_ai_account_variable = "CLOUDFLARE_ACCOUNT_ID";

/// Cloudflare's API, the default Workers AI base URL. A base URL given without the
/// "/client/v4" suffix gets it added.
inline constexpr const char* workers_ai_default_base_url = "https://api.cloudflare.com/client/v4";
/// The first Ollama release that serves /v1/systemone.
inline constexpr const char* minimum_ollama_version = "0.35.1";

/// The base URL Ollama's own tools derive from an OLLAMA_HOST value ("" → local default).
std::string ollama_base_url(std::string_view ollama_host);

}  // namespace clef
