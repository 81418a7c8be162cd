// clef: the kinds of server clef speaks to, their names, environment variables and defaults.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "clef/export.hpp"
#include "clef/result.hpp"

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
/// What differs between the kinds of server where a program speaks of them — its messages, its
/// flags, which checks apply — one row per backend in one table (backend.cpp), so code outside
/// clef's backends reads a trait instead of naming a backend.
struct BackendTraits {
  /// How a person names the server: "Ollama", "Workers AI", "the System One server", "OpenAI".
  const char* server = "";
  /// The variable that names the server's address, read as Ollama's own tools read it
  /// (read_ollama_host), or nullptr: OLLAMA_HOST.
  const char* host_variable = nullptr;
  /// The command that starts a local server, or nullptr: "ollama serve".
  const char* start_command = nullptr;
  /// token_variable(): where the API token comes from, or nullptr when none is needed.
  const char* token_variable = nullptr;
  /// Requests name an account (Workers AI: CLOUDFLARE_ACCOUNT_ID).
  bool needs_account = false;
  /// Cloudflare's AI Gateway may stand in front of it.
  bool takes_gateway = false;
  /// Model names carry tags the way Ollama's do ("clef-flash" is "clef-flash:latest"), and the
  /// server lists its models with a digest for each version (/api/tags): what the cache keys
  /// answers by and a fleet of hosts is checked with.
  bool tagged_models = false;
};

/// The traits of `backend`.
CLEF_API const BackendTraits& traits_of(Backend backend) noexcept;

/// The environment variable of Workers AI's account id.
inline constexpr const char* workers_ai_account_variable = "CLOUDFLARE_ACCOUNT_ID";

/// Cloudflare's API, the default Workers AI base URL. A base URL given without the
/// "/client/v4" suffix gets it added.
inline constexpr const char* workers_ai_default_base_url = "https://api.cloudflare.com/client/v4";
/// OpenAI's API, the default base URL of the openai backend (requests go to {base}/decisions).
inline constexpr const char* openai_default_base_url = "https://api.openai.com/v1";
/// The first Ollama release that serves /v1/systemone.
inline constexpr const char* minimum_ollama_version = "0.35.1";

/// The base URL Ollama's own tools derive from an OLLAMA_HOST value ("" → local default), or an
/// invalid_input error saying why the value cannot be read as written: a stray or missing ']'
/// (`http://127.0.0.1:8000]`, `http://[::1:8000`), a port outside 1-65535, a scheme other than
/// http/https, a space or a byte outside ASCII, a query. Ollama's own tools fall back to
/// 127.0.0.1:11434 on such a value; clef refuses it, as a typo there would otherwise send
/// every request to whatever listens on the default port. Credentials in it
/// ("http://alice:pw@host:8080", basic auth in front of a remote Ollama) are kept, still
/// percent-encoded.
CLEF_API Result<std::string> read_ollama_host(std::string_view ollama_host);
/// Refused (invalid_input, saying why) unless `url` is a server URL clef can send to as written:
/// read_ollama_host's rules, with a host named. --host, --hosts FILE and clef doctor check
/// with it.
CLEF_API Status check_server_url(std::string_view url);
/// read_ollama_host's URL, or Ollama's own fallback (http://127.0.0.1:11434) for a value it
/// cannot read: what `ollama` itself would connect to.
CLEF_API std::string ollama_base_url(std::string_view ollama_host);

/// The server a base URL names, in one form, so two spellings of one server compare equal:
/// scheme and host in lower case, the port written out (80 for http, 443 for https), an IPv4
/// address in any form the resolver takes (`127.1`, `2130706433`) and an IPv6 one
/// (`[0:0:0:0:0:0:0:1]`) written canonically, no user or password, no trailing '/'. The URL as
/// given when it cannot be read.
CLEF_API std::string server_identity(std::string_view base_url);

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
