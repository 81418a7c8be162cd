// Ollama (>= 0.35.1) as a backend: OLLAMA_HOST, raw base64 images, images only, a 32 MiB body,
// and what its 400s and 404s mean.
#include "clef/ollama.hpp"
#include "wire/backend_wire.hpp"
#include "wire/request_limits.hpp"

namespace clef::detail {
namespace {

class OllamaWire final : public BackendWire {
 public:
  const BackendTraits& traits() const override {
    static const BackendTraits traits = [] {
      BackendTraits t;
      t.server = "Ollama";
      t.host_variable = "OLLAMA_HOST";
      t.start_command = "ollama serve";
      t.tagged_models = true;
      return t;
    }();
    return traits;
  }

  void read_environment(ClientOptions& options) const override {
    // An OLLAMA_HOST that cannot be read leaves it empty: Client::create refuses it then.
    if (auto host = read_ollama_host(env("OLLAMA_HOST")))
      options.base_url = std::move(host).value();
  }

  Result<std::string> base_url(const ClientOptions& options) const override {
    // Unreadable, OLLAMA_HOST is refused here, naming it (Ollama would fall back).
    if (options.base_url.empty()) return read_ollama_host(env("OLLAMA_HOST"));
    return options.base_url;
  }

  const char* images_only() const override { return "Ollama's System One API takes"; }
  const char* form_without_boxes() const override { return "Ollama's System One API"; }
  bool raw_base64_images() const override { return true; }

  Status check_body_size(std::size_t body_bytes, const std::string&) const override {
    return check_ollama_body_size(body_bytes);
  }

  std::string not_found_hint(const ServerText& text, const std::string& model,
                             const std::string& at, bool plain_path) const override {
    if (mentions_model(text)) {
      return "model \"" + model + "\" is not on this Ollama server: run `ollama pull " + model +
             "`";
    }
    if (!text.json && plain_path) {
      return "this server has no /v1/systemone endpoint: upgrade Ollama to " +
             std::string(minimum_ollama_version) + " or newer (`clef doctor` checks)";
    }
    return "nothing answers at " + at +
           ": give --host as Ollama's base URL, e.g. http://127.0.0.1:11434";
  }

  std::optional<std::string> bad_request_hint(const ServerText& text,
                                              const std::string& model) const override {
    if (!is_mlx_or_safetensors_tag(model) && text.message.find("MLX") == std::string::npos &&
        text.message.find("Safetensors") == std::string::npos)
      return std::nullopt;
    return "Ollama cannot serve \"" + model +
           "\" on /v1/systemone (MLX and Safetensors builds are not supported there): use "
           "the default tag, e.g. `ollama pull clef-flash` and --model clef-flash";
  }

  std::string credentials_hint(int, const ServerText&) const override {
    // Ollama asks for none: what refuses is in front of it (a proxy), or not Ollama.
    return "the server refused the request's credentials (Ollama itself asks for none: a proxy "
           "in front of it may)";
  }
};

}  // namespace

const BackendWire& ollama_wire() {
  static const OllamaWire wire;
  return wire;
}

}  // namespace clef::detail
