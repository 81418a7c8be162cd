// The implementation of server_commands.hpp: `clef models` and `clef doctor`.
#include "commands/server_commands.hpp"
#include "common/flag_rules.hpp"

#include <nlohmann/json.hpp>

#include "clef/json.hpp"
#include "clef/ollama.hpp"
#include "common/exit_codes.hpp"
#include "common/terminal_text.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

/// Ollama's API for these flags (always the Ollama backend, whatever --backend says).
Result<OllamaApi> ollama_api(ConnectionFlags flags, const Context& context) {
  flags.backend = Backend::ollama;
  auto options = client_options(flags, context);
  if (!options) return options.error();
  return OllamaApi::create(std::move(options).value());
}

/// One doctor line; returns `code` so a failed check can be returned directly.
int check_line(const Context& context, bool ok, const std::string& what,
               const std::string& fix = {}, ExitCode code = ExitCode::ok) {
  context.out << (ok ? "ok    " : "FAIL  ") << terminal_safe_line(what) << "\n";
  if (!ok && !fix.empty()) context.out << "      fix: " << terminal_safe_line(fix) << "\n";
  return as_int(ok ? ExitCode::ok : code);
}

int failed_check(const Context& context, const std::string& what, const Error& error,
                 const std::string& fix = {}) {
  return check_line(context, false, what + ": " + error.to_string(), fix,
                    exit_code_for(error.kind));
}

/// Sends one minimal real decision: the only proof that the URL, the token and the model work.
int probe_decision(const ConnectionFlags& given, const Context& context) {
  // An answer from a cache — the gateway's or clef's own — would prove nothing about the token
  // or the model.
  ConnectionFlags flags = given;
  if (through_gateway(flags)) flags.gateway.skip_cache = true;
  flags.without_cache = true;
  auto client = make_client(flags, context, false);
  if (!client) return failed_check(context, "cannot make a client", client.error());
  DecisionRequest probe;
  probe.state = State::text("clef doctor");
  probe.questions = {Question::yes_no("reachable", "Is this a test?")};
  auto decision = client->decide(probe);
  if (!decision) {
    std::string fix;
    if (decision.error().kind == ErrorKind::authentication) {
      const BackendTraits& traits = traits_of(flags.backend);
      fix = through_gateway(flags)
                ? std::string("check the token's ") + traits.server +
                      " permission, the account id and, for an Authenticated Gateway, its token "
                      "(CF_AIG_TOKEN or --aig-token-file)"
            : traits.needs_account ? std::string("check the token's ") + traits.server +
                                         " permission and the account id"
            : traits.token_variable
                ? std::string("check the key in ") + traits.token_variable + " or --api-token-file"
                : "check the credentials in the server's URL";
    }
    return failed_check(context, "a test decision to " + client->endpoint(probe) + " failed",
                        decision.error(), fix);
  }
  // An answer that is not a valid yes/no (a refusal, a probability of 7) proves the route, not
  // the model: the check fails, naming what came back.
  const Answer& answer = decision->answers.front();
  if (answer.status != AnswerStatus::ok) {
    return check_line(context, false,
                      "a test decision to " + client->endpoint(probe) + " came back " +
                          to_string(answer.status) + ": " + answer.problem,
                      "", ExitCode::server);
  }
  std::string what = "a test decision succeeded (model " + decision->model;
  if (!decision->request_id.empty()) what += ", request id " + decision->request_id;
  return check_line(context, true, what + ")");
}

int doctor_ollama(ConnectionFlags flags, const Context& context) {
  if (flags.timeout_seconds > 15) flags.timeout_seconds = 15;
  auto api = ollama_api(flags, context);
  if (!api) return failed_check(context, "cannot reach Ollama", api.error());
  auto version = api->version();
  if (!version) {
    // Only a server that is not there needs starting; one that answered said what is wrong.
    const ErrorKind kind = version.error().kind;
    const bool absent = kind == ErrorKind::connection_failed || kind == ErrorKind::timeout;
    return failed_check(
        context, "Ollama at " + api->base_url(), version.error(),
        absent ? "start it with `ollama serve`, or point --host / OLLAMA_HOST at it" : "");
  }
  // Shown at most 40 bytes: a server's version is a word, not a page.
  const std::string shown = version->substr(0, 40) + (version->size() > 40 ? "…" : "");
  check_line(context, true, "Ollama at " + api->base_url() + " answers (version " + shown + ")");
  const std::string minimum = minimum_ollama_version;
  // Any version clef can read is at least 0.0.0: one it cannot is not "too old".
  if (!version_at_least(version.value(), "0.0.0")) {
    return check_line(context, false, "Ollama's version \"" + shown + "\" is not one clef can read",
                      "", ExitCode::server);
  }
  if (!version_at_least(version.value(), minimum)) {
    return check_line(context, false, "Ollama " + shown + " has no /v1/systemone",
                      "upgrade Ollama to " + minimum + " or newer", ExitCode::server);
  }
  check_line(context, true, "Ollama " + shown + " is new enough (>= " + minimum + ")");
  auto model = api->show(flags.model);
  if (!model) {
    if (model.error().kind == ErrorKind::not_found) {
      return check_line(context, false, "model " + flags.model + " is not pulled",
                        "run `ollama pull " + flags.model + "`", ExitCode::server);
    }
    return failed_check(context, "cannot read model " + flags.model, model.error());
  }
  if (!model->can_decide()) {
    return check_line(
        context, false,
        "model " + flags.model +
            " is not a decision model (capabilities: " + joined(model->capabilities, ", ") + ")",
        "use a decision model such as clef-flash (`clef models` lists them)", ExitCode::server);
  }
  if (!model->serves_systemone()) {
    return check_line(context, false,
                      "model " + flags.model + " is an MLX or Safetensors build" +
                          (model->format.empty() ? "" : " (format " + model->format + ")") +
                          ", which Ollama does not serve on /v1/systemone",
                      "use the default tag: `ollama pull clef-flash` and --model clef-flash",
                      ExitCode::server);
  }
  return check_line(context, true, "model " + flags.model + " is pulled and decision-capable");
}

int doctor_workers(const ConnectionFlags& flags, const Context& context) {
  auto options = client_options(flags, context);
  if (!options) return failed_check(context, "the options", options.error());
  int code = as_int(ExitCode::ok);
  if (options->account_id.empty()) {
    code = check_line(context, false, "no Workers AI account id",
                      "export CLOUDFLARE_ACCOUNT_ID=<your account id> (or --account-id)",
                      ExitCode::authentication);
  } else {
    check_line(context, true, "account id is set");
  }
  if (options->api_token.empty()) {
    code = check_line(context, false, "no Workers AI API token",
                      "export CLOUDFLARE_API_TOKEN=<a token with Workers AI permission> (or "
                      "--api-token-file FILE)",
                      ExitCode::authentication);
  } else {
    check_line(context, true,
               "API token is present (" + std::to_string(options->api_token.size()) +
                   " characters; not shown)");
  }
  if (code != as_int(ExitCode::ok)) return code;
  return probe_decision(flags, context);
}

}  // namespace

CLI::App* add_models_command(CLI::App& app, ModelsFlags& flags) {
  CLI::App* models =
      app.add_subcommand("models", "List the models on an Ollama host and which can decide");
  models->footer(
      "Examples:\n"
      "  clef models\n"
      "  clef models --host http://gpu1:11434 --json\n");
  models->add_option("--host", flags.connection.hosts, "Ollama base URL (default: OLLAMA_HOST)")
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  models->add_option("--timeout", flags.connection.timeout_seconds, "Seconds per call")
      ->capture_default_str()
      ->check(finite_number() & CLI::Range(0.001, 86400.0));
  models->add_flag("--json", flags.json, "Print JSON");
  models->add_flag("-v,--verbose", flags.connection.verbose, "Print each HTTP call on stderr");
  return models;
}

int run_models(const ModelsFlags& flags, const Context& process) {
  const Context context = cancelled_at_first_signal(process);
  auto api = ollama_api(flags.connection, context);
  if (!api) return report(context, api.error(), flags.connection);
  auto models = api->models();
  if (!models) return report(context, models.error(), flags.connection);
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  if (!flags.json) context.out << "MODEL                          DECISION  CAPABILITIES\n";
  for (const auto& listed : models.value()) {
    auto model = api->show(listed.name);
    if (!model) return report(context, model.error(), flags.connection);
    if (flags.json) {
      json.push_back({{"name", listed.name},
                      {"digest", listed.digest},
                      {"decision", model->can_decide()},
                      {"capabilities", model->capabilities}});
      continue;
    }
    std::string padded = terminal_safe_line(listed.name);
    if (padded.size() < 30) padded.resize(30, ' ');
    context.out << padded << " " << (model->can_decide() ? "yes     " : "no      ") << "  "
                << terminal_safe_line(joined(model->capabilities, ", ")) << "\n";
  }
  if (flags.json)
    context.out << dump_json(json) << "\n";
  else
    context.out << "Models without \"decision\" are refused by /v1/systemone (HTTP 400).\n";
  return as_int(ExitCode::ok);
}

CLI::App* add_doctor_command(CLI::App& app, ConnectionFlags& flags) {
  CLI::App* doctor = app.add_subcommand(
      "doctor", "Check the server, the model and the credentials, and say what to fix");
  doctor->footer(
      "Ollama's version and model are each asked once (the check reports what the server says "
      "now; --retries applies to the test decision sent to other servers).\n"
      "Examples:\n"
      "  clef doctor\n"
      "  clef doctor --backend workers-ai -m @cf/cloudflare/clef-flash\n");
  add_connection_flags(*doctor, flags);
  return doctor;
}

int run_doctor(const ConnectionFlags& flags, const Context& process) {
  const Context context = cancelled_at_first_signal(process);
  // A server that lists its models gets them checked; an account, its token and id; any other,
  // a test decision.
  const BackendTraits& traits = traits_of(flags.backend);
  if (traits.tagged_models) return doctor_ollama(flags, context);
  if (traits.needs_account) return doctor_workers(flags, context);
  return probe_decision(flags, context);
}

}  // namespace clef::cli
