// The implementation of config_command.hpp.
#include "commands/config_command.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "clef/backend.hpp"
#include "clef/json.hpp"
#include "common/exit_codes.hpp"
#include "common/terminal_text.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

/// One key as a command would see it with no flag given.
struct Shown {
  std::string key;
  std::string value;
  std::string source;  ///< environment | profile | file | default
  std::string where;   ///< The variable, or FILE:LINE; "" for a default.
};

std::string masked(const std::string& secret) {
  return "******** (set, " + std::to_string(secret.size()) + " characters)";
}

Shown shown(const ConfigKey& key, const Config& config, const std::string& backend,
            const CLI::App& defaults) {
  const std::string variable = environment_override(key, backend);
  if (!variable.empty()) {
    const std::string value = std::getenv(variable.c_str());
    // A token variable holds the secret itself; a file key's variable is a token too.
    return {key.key, key.secret_file ? masked(value) : value, "environment", variable};
  }
  if (const ConfigValue* from_file = config.find(key.key)) {
    return {key.key, joined(from_file->arguments, ", "),
            from_file->profile.empty() ? "file" : "profile " + from_file->profile,
            from_file->where};
  }
  const CLI::Option* flag = defaults.get_option_no_throw(key.flag);
  const std::string value = flag ? flag->get_default_str() : "";
  return {key.key, value.empty() ? "(none)" : value, "default", ""};
}

void print_text(const std::vector<Shown>& settings, const Config& config,
                const std::string& backend, std::ostream& out) {
  out << "config file: " << (config.path.empty() ? "(none)" : terminal_safe_line(config.path));
  if (!config.profile.empty())
    out << ", profile " << terminal_safe_line(config.profile) << " (" << config.profile_source
        << ")";
  out << "\nbackend for the environment's variables: " << backend
      << "\nflags given to a command beat everything below\n";
  std::size_t width = 0;
  for (const Shown& s : settings) width = std::max(width, s.key.size());
  for (const Shown& s : settings) {
    out << "  " << s.key << std::string(width + 2 - s.key.size(), ' ')
        << terminal_safe_line(s.value) << "  [" << s.source
        << (s.where.empty() ? "" : " " + terminal_safe_line(s.where)) << "]\n";
  }
}

}  // namespace

CLI::App* add_config_command(CLI::App& app, ConfigFlags& flags) {
  CLI::App* config = app.add_subcommand(
      "config", "Show the settings a command would use and where each comes from");
  config->footer(
      "Examples:\n"
      "  clef config show\n"
      "  clef config path\n"
      "  clef --profile cloudflare config show --backend workers-ai\n");
  config
      ->add_option("ACTION", flags.action, "show | path (path: where clef looks for its settings)")
      ->required()
      ->check(CLI::IsMember({"show", "path"}));
  config->add_option("--backend", flags.backend,
                     "Whose environment variables count (default: the file's backend, else "
                     "ollama)");
  config->add_flag("--json", flags.json, "One JSON object instead of lines");
  return config;
}

int run_config_command(const ConfigFlags& flags, const ConfigChoice& choice,
                       const CLI::App& defaults, const Context& context) {
  if (flags.action == "path") {
    const std::string path = config_file_path(choice);
    if (path.empty()) {
      print_error(context,
                  "no config file: neither --config, CLEF_CONFIG, XDG_CONFIG_HOME nor "
                  "HOME is set");
      return as_int(ExitCode::usage);
    }
    context.out << path << "\n";
    return as_int(ExitCode::ok);
  }
  auto config = load_config(choice);
  if (config) {
    // What every command would refuse is refused here too, where it is written.
    if (auto checked = check_config_values(config.value(), defaults); !checked)
      config = checked.error();
  }
  if (!config) {
    print_error(context, config.error().message + " (" + config.error().where + ")");
    return as_int(ExitCode::usage);
  }
  std::string backend = flags.backend;
  if (backend.empty() && config->find("backend")) backend = config->find("backend")->arguments[0];
  if (backend.empty()) backend = "ollama";
  if (!backend_named(backend)) {
    print_error(context, "unknown backend '" + terminal_safe(backend) +
                             "': use ollama, workers-ai, systemone or openai (--backend)");
    return as_int(ExitCode::usage);
  }
  std::vector<Shown> settings;
  for (const ConfigKey& key : config_keys())
    settings.push_back(shown(key, config.value(), backend, defaults));
  if (!flags.json) {
    print_text(settings, config.value(), backend, context.out);
    return as_int(ExitCode::ok);
  }
  nlohmann::ordered_json out = {
      {"file",
       config->path.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(config->path)},
      {"profile", config->profile.empty() ? nlohmann::ordered_json()
                                          : nlohmann::ordered_json(config->profile)},
      {"backend", backend},
      {"settings", nlohmann::ordered_json::array()}};
  for (const Shown& s : settings)
    out["settings"].push_back(
        {{"key", s.key}, {"value", s.value}, {"source", s.source}, {"where", s.where}});
  context.out << dump_json(out, 2) << "\n";
  return as_int(ExitCode::ok);
}

}  // namespace clef::cli
