// Cloudflare Workers AI as a backend, with AI Gateway in front of it or not: the account and
// token variables, the per-account URL of each model, its bare model names, its envelope, its
// limits, the neurons it measures, and what its codes mean.
#include "util/ascii.hpp"
#include "wire/ai_gateway.hpp"
#include "wire/backend_wire.hpp"
#include "wire/cost.hpp"
#include "wire/http_errors.hpp"
#include "wire/request_limits.hpp"
#include "wire/workers_ai.hpp"

namespace clef::detail {
namespace {

/// AI Gateway's "Please configure AI Gateway": no gateway of that name on the account.
constexpr std::string_view gateway_not_configured_code = "2001";

/// "\"support\"" for …/v1/ACCOUNT/support/workers-ai/…: the segment before "/workers-ai/".
std::string gateway_named_in(std::string_view url) {
  const auto end = url.find("/workers-ai/");
  if (end == std::string_view::npos || end == 0) return "of that name";
  const auto start = url.rfind('/', end - 1);
  if (start == std::string_view::npos) return "of that name";
  return "\"" + std::string(url.substr(start + 1, end - start - 1)) + "\"";
}

class WorkersAiWire final : public BackendWire {
 public:
  const BackendTraits& traits() const override {
    static const BackendTraits traits = [] {
      BackendTraits t;
      t.server = "Workers AI";
      t.token_variable = "CLOUDFLARE_API_TOKEN";
      t.needs_account = true;
      t.takes_gateway = true;
      return t;
    }();
    return traits;
  }

  void read_environment(ClientOptions& options) const override {
    BackendWire::read_environment(options);  // the token
    options.account_id = env(workers_ai_account_variable);
    options.gateway.token = std::string(trimmed_space(env(ai_gateway_token_variable)));
  }

  Result<std::string> base_url(const ClientOptions& options) const override {
    const std::string& base = options.base_url;
    const bool gateway_url = is_ai_gateway_url(base);  // it holds the account itself
    if (!gateway_url && options.account_id.empty()) {
      return make_error(ErrorKind::invalid_input,
                        "Workers AI needs an account id: set CLOUDFLARE_ACCOUNT_ID", "account_id");
    }
    if (!gateway_url && !is_ascii_alphanumeric(options.account_id)) {
      return make_error(ErrorKind::invalid_input, "the account id must be letters and digits",
                        "account_id");
    }
    if (options.api_token.empty() && !options.offline) {
      return make_error(ErrorKind::authentication,
                        "Workers AI needs an API token: set CLOUDFLARE_API_TOKEN", "api_token");
    }
    if (gateway_url) return base;
    if (!options.gateway.id.empty()) return gateway_root(options);
    return workers_api_root(base.empty() ? workers_ai_default_base_url : base);
  }

  bool through_gateway(const ClientOptions& options) const override {
    return !options.gateway.id.empty() || is_ai_gateway_url(options.base_url);
  }

  std::string decision_url(const ClientOptions& options, const std::string& base_url,
                           const std::string& model) const override {
    auto names = workers_model(model);
    const std::string path = names ? names->path : model;
    // Through AI Gateway the base URL is the gateway's Workers AI root (ai_gateway.hpp).
    if (through_gateway(options)) return base_url + "/" + path;
    return base_url + "/accounts/" + options.account_id + "/ai/run/" + path;
  }

  Result<std::string> body_model_name(const std::string& model) const override {
    auto names = workers_model(model);
    if (!names) return names.error();
    return std::move(names->body);
  }

  const char* keep_alive_refusal() const override { return "Workers AI refuses"; }
  const char* form_without_boxes() const override { return "Workers AI's Clef schema"; }

  Status check_images(const DecisionRequest& request) const override {
    return check_workers_images(request);
  }

  Status check_body_size(std::size_t body_bytes, const std::string& model) const override {
    return check_workers_body_size(body_bytes, model);
  }

  bool sends_bare_reply() const override { return false; }

  /// Out of the {result, success, errors, messages} envelope, with what AI Gateway said.
  Result<Decision> read_success(Success success) const override {
    const bool enveloped = success.body.is_object() && success.body.contains("success");
    auto inner = unwrap_workers_envelope(std::move(success.body), success.response, success.secret);
    if (!inner) return inner.error();
    success.body = std::move(inner).value();
    std::string_view text = success.response.body;
    if (enveloped) text = member_text(text, "result").value_or(std::string_view());
    auto decision = read_system_one(success, text);
    if (decision) decision->gateway = gateway_report(success.response, success.secret);
    return decision;
  }

  std::string not_found_hint(const ServerText& text, const std::string& model,
                             const std::string& at, bool) const override {
    if (mentions_model(text)) {
      return "Workers AI has no model \"" + model + "\" (clef-flash and clef are decision models)";
    }
    return "Workers AI has no such route (" + at +
           "): check the account id and --host (the API root, "
           "https://api.cloudflare.com/client/v4)";
  }

  std::string credentials_hint(int, const ServerText& text) const override {
    if (text.code == "2009") {
      return "AI Gateway refused a token: an Authenticated Gateway's (cf-aig-authorization: "
             "CF_AIG_TOKEN or --aig-token-file, else the Workers AI token), or the Workers AI "
             "token it passes on (CLOUDFLARE_API_TOKEN)";
    }
    return "Workers AI refused the token: check CLOUDFLARE_API_TOKEN (it needs Workers AI "
           "permission) and CLOUDFLARE_ACCOUNT_ID";
  }

  void amend_error(Error& error, const ServerText& text, int status,
                   std::string_view url) const override {
    // Sent with 400: no gateway of that name on the account. Only on a 400: a 429 or 5xx
    // quoting the code keeps its status's kind and retry.
    if (status != 400 || text.code != gateway_not_configured_code) return;
    error.kind = ErrorKind::not_found;
    error.message = "AI Gateway has no gateway " + gateway_named_in(url) +
                    " on this account: create it (dashboard, AI > AI Gateway) or check its name";
  }

  std::optional<Cost> measured_cost(const HttpResponse& response) const override {
    return cf_ai_neurons_cost(response);
  }
};

}  // namespace

const BackendWire& workers_ai_wire() {
  static const WorkersAiWire wire;
  return wire;
}

}  // namespace clef::detail
