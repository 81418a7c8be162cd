// OpenAI's decisions as a backend: OPENAI_API_KEY, {base}/decisions, its own body and answers
// (openai_dialect.hpp), images only, no keep_alive, and what its 401s, 403s and 404s mean.
#include "wire/backend_wire.hpp"
#include "wire/http_errors.hpp"
#include "wire/openai_dialect.hpp"
#include "wire/wire_response.hpp"

namespace clef::detail {
namespace {

class OpenAiWire final : public BackendWire {
 public:
  const BackendTraits& traits() const override {
    static const BackendTraits traits = [] {
      BackendTraits t;
      t.server = "OpenAI";
      t.token_variable = "OPENAI_API_KEY";
      return t;
    }();
    return traits;
  }

  Result<std::string> base_url(const ClientOptions& options) const override {
    if (options.api_token.empty() && !options.offline) {
      return make_error(ErrorKind::authentication,
                        "OpenAI's decisions need an API key: set OPENAI_API_KEY", "api_token");
    }
    return options.base_url.empty() ? openai_default_base_url : options.base_url;
  }

  std::string decision_url(const ClientOptions&, const std::string& base_url,
                           const std::string&) const override {
    return base_url + "/decisions";
  }

  Result<std::string> write_body(const DecisionRequest& request, const std::string& model,
                                 const PreparedQuestions&) const override {
    return openai_request_body(request, model);
  }

  const std::set<std::string>& fields_sent() const override {
    static const std::set<std::string> fields = {"model", "input", "questions"};
    return fields;
  }

  const char* keep_alive_refusal() const override { return "OpenAI's decisions refuse"; }
  const char* images_only() const override { return "OpenAI's decisions take"; }
  const char* form_without_boxes() const override { return "OpenAI's /v1/decisions"; }

  bool sends_bare_reply() const override { return false; }

  Result<Decision> read_success(Success success) const override {
    auto decision = read_openai_decision(success.body, success.questions, success.validation);
    if (!decision) return unusable_success(decision.error(), success);
    decision->request_id = request_id(success.response);
    decision->raw_json = success.response.body;
    return decision;
  }

  std::string not_found_hint(const ServerText& text, const std::string& model,
                             const std::string& at, bool) const override {
    if (mentions_model(text)) return "the server has no decisions model \"" + model + "\"";
    return "nothing answers at " + at +
           ": give --host as the API's base URL (https://api.openai.com/v1; clef adds "
           "/decisions)";
  }

  std::string credentials_hint(int status, const ServerText&) const override {
    return status == 403 ? "the server refused this request for this key (OpenAI's 403: a "
                           "country, region or project it does not serve, or a model the "
                           "key may not use)"
                         : "the server refused the key: check OPENAI_API_KEY (or "
                           "--api-token-file)";
  }
};

}  // namespace

const BackendWire& openai_wire() {
  static const OpenAiWire wire;
  return wire;
}

}  // namespace clef::detail
