#include "server_commands.hpp"

#include <nlohmann/json.hpp>

#include "exit_codes.hpp"
#include "ollama_api.hpp"
#include "request_builder.hpp"

namespace clef::cli {
namespace {

constexpr const char* minimum_ollama = "0.35.1";

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string host_of(const ConnectionFlags& flags) {
  return flags.host.empty() ? ClientOptions::from_environment(Backend::ollama).base_url
                            : ollama_base_url(flags.host);
}

std::chrono::milliseconds timeout_of(const ConnectionFlags& flags) {
  return std::chrono::milliseconds(static_cast<long long>(flags.timeout_seconds * 1000.0));
}

/// One doctor line; returns `code` so a failed check can be returned directly.
int check_line(const Context& context, bool ok, const std::string& what,
               const std::string& fix = {}, ExitCode code = ExitCode::ok) {
  context.out << (ok ? "ok    " : "FAIL  ") << what << "\n";
  if (!ok && !fix.empty()) context.out << "      fix: " << fix << "\n";
  return as_int(ok ? ExitCode::ok : code);
}

int doctor_ollama(const ConnectionFlags& flags, const Context& context) {
  const OllamaApi api(host_of(flags),
                      std::min(timeout_of(flags), std::chrono::milliseconds(15'000)));
  auto version = api.version();
  if (!version) {
    return check_line(context, false,
                      "Ollama at " + api.base_url() + ": " + version.error().message,
                      "start it with `ollama serve`, or point --host / OLLAMA_HOST at it",
                      exit_code_for(version.error().kind));
  }
  check_line(context, true,
             "Ollama at " + api.base_url() + " answers (version " + version.value() + ")");
  if (!version_at_least(version.value(), minimum_ollama)) {
    return check_line(context, false, "Ollama " + version.value() + " has no /v1/systemone",
                      "upgrade Ollama to 0.35.1 or newer", ExitCode::server);
  }
  check_line(context, true, "Ollama " + version.value() + " is new enough (>= 0.35.1)");
  auto model = api.show(flags.model);
  if (!model) {
    if (model.error().kind == ErrorKind::not_found) {
      return check_line(context, false, "model " + flags.model + " is not pulled",
                        "run `ollama pull " + flags.model + "`", ExitCode::server);
    }
    return check_line(context, false,
                      "cannot read model " + flags.model + ": " + model.error().to_string(), "",
                      exit_code_for(model.error().kind));
  }
  if (!model->decision()) {
    return check_line(
        context, false,
        "model " + flags.model +
            " is not a decision model (capabilities: " + joined(model->capabilities) + ")",
        "use a decision model such as clef-flash (`clef models` lists them)", ExitCode::server);
  }
  return check_line(context, true, "model " + flags.model + " is pulled and decision-capable");
}

int doctor_workers(const ConnectionFlags& flags, const Context& context) {
  auto options = client_options(flags, nullptr);
  if (!options)
    return check_line(context, false, options.error().to_string(), "",
                      exit_code_for(options.error().kind));
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
  return code;
}

int doctor_systemone(const ConnectionFlags& flags, const Context& context) {
  auto client = make_client(flags, context, false);
  if (!client)
    return check_line(context, false, client.error().to_string(), "",
                      exit_code_for(client.error().kind));
  DecisionRequest probe;
  probe.state = State::text("clef doctor");
  probe.questions = {Question::yes_no("reachable", "Is this a test?")};
  auto decision = client->decide(probe);
  if (!decision) {
    return check_line(context, false, "a test decision failed: " + decision.error().to_string(), "",
                      exit_code_for(decision.error().kind));
  }
  return check_line(context, true, "a test decision succeeded (model " + decision->model + ")");
}

}  // namespace

CLI::App* add_models_command(CLI::App& app, ModelsFlags& flags) {
  CLI::App* models =
      app.add_subcommand("models", "List the models on an Ollama host and which can decide");
  models->add_option("--host", flags.connection.host, "Ollama base URL (default: OLLAMA_HOST)");
  models->add_option("--timeout", flags.connection.timeout_seconds, "Seconds per call")
      ->capture_default_str();
  models->add_flag("--json", flags.json, "Print JSON");
  return models;
}

int run_models(const ModelsFlags& flags, const Context& context) {
  const OllamaApi api(host_of(flags.connection), timeout_of(flags.connection));
  auto names = api.model_names();
  if (!names) return report(context, names.error(), flags.connection);
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  if (!flags.json) context.out << "MODEL                          DECISION  CAPABILITIES\n";
  for (const auto& name : names.value()) {
    auto model = api.show(name);
    if (!model) return report(context, model.error(), flags.connection);
    if (flags.json) {
      json.push_back(
          {{"name", name}, {"decision", model->decision()}, {"capabilities", model->capabilities}});
      continue;
    }
    std::string padded = name;
    if (padded.size() < 30) padded.resize(30, ' ');
    context.out << padded << " " << (model->decision() ? "yes     " : "no      ") << "  "
                << joined(model->capabilities) << "\n";
  }
  if (flags.json)
    context.out << json.dump() << "\n";
  else
    context.out << "Models without \"decision\" are refused by /v1/systemone (HTTP 400).\n";
  return as_int(ExitCode::ok);
}

CLI::App* add_doctor_command(CLI::App& app, ConnectionFlags& flags) {
  CLI::App* doctor = app.add_subcommand(
      "doctor", "Check the server, the model and the credentials, and say what to fix");
  add_connection_flags(*doctor, flags);
  return doctor;
}

int run_doctor(const ConnectionFlags& flags, const Context& context) {
  if (flags.backend == "ollama") return doctor_ollama(flags, context);
  if (flags.backend == "workers-ai") return doctor_workers(flags, context);
  if (flags.backend == "systemone") return doctor_systemone(flags, context);
  return check_line(context, false, "unknown backend \"" + flags.backend + "\"",
                    "use ollama, workers-ai or systemone", ExitCode::usage);
}

}  // namespace clef::cli
