// clef: the kinds of server clef speaks to, their names, environment variables and defaults.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "clef/export.hpp"

namespace clef {

enum class Backend {
  ollama,      ///< Ollama >= 0.35.1: {base}/v1/systemone, no key, raw base64 images.
  workers_ai,  ///< Cloudflare Workers AI: per-account URL, Bearer token, result envelope.
  systemone,   ///< Any other System One server by base URL, optional Bearer key.
  /// OpenAI's POST {base}/decisions dialect (GPT-6 Luna; Fireworks serves it too): questions
  /// an array, answers in question order. Bearer OPENAI_API_KEY.
  openai,
};

/// "ollama", "workers-ai", "systemone" or "openai": the names the CLI and the environment use.
CLEF_API const char* to_string(Backend backend) noexcept;
/// The backend called `name` (as to_string spells it), or nullopt.
CLEF_API std::optional<Backend> backend_named(std::string_view name) noexcept;

/// The environment variable the API token is read from: CLOUDFLARE_API_TOKEN (Workers AI),
/// CLEF_API_KEY (systemone), OPENAI_API_KEY (openai), or nullptr (Ollama takes none).
CLEF_API const char* token_variable(Backend backend) noexcept;
/// The environment variable of Workers AI's account id.
inline constexpr const char* workers_ai_account_variable = "CLOUDFLARE_ACCOUNT_ID";

/// Cloudflare's API, the default Workers AI base URL. A base URL given without the
/// "/client/v4" suffix gets it added.
inline constexpr const char* workers_ai_default_base_url = "https://api.cloudflare.com/client/v4";
/// OpenAI's API, the default base URL of the openai backend (requests go to {base}/decisions).
inline constexpr const char* openai_default_base_url = "https://api.openai.com/v1";
/// The first Ollama release that serves /v1/systemone.
inline constexpr const char* minimum_ollama_version = "0.35.1";

/// The base URL Ollama's own tools derive from an OLLAMA_HOST value ("" → local default).
/// Credentials in it ("http://alice:pw@host:8080", basic auth in front of a remote Ollama) are
/// kept, still percent-encoded.
CLEF_API std::string ollama_base_url(std::string_view ollama_host);

/// The user name and password of a URL's userinfo ("http://alice:p%40ss@host" → "alice",
/// "p@ss"), percent-decoded. clef sends them as HTTP basic authentication.
struct UrlCredentials {
  std::string user;
  std::string password;
};
/// The credentials in `url`'s authority, or nullopt when it has none.
CLEF_API std::optional<UrlCredentials> url_credentials(std::string_view url);
/// `url` without its "user:password@": the form clef sends, shows and writes (errors, -v,
/// --dry-run, batch lines, run records), so a password never leaves in a URL.
CLEF_API std::string url_without_credentials(std::string_view url);

}  // namespace clef
