// The implementation of config_file.hpp: the file read with toml++ (header-only, no exceptions:
// every error is a value), its keys checked against one table, the profile merged over the top
// level.
#include "flags/config_file.hpp"

#include <sys/stat.h>

#include <charconv>
#include <cstdlib>

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

#include "clef/backend.hpp"
#include "common/files.hpp"
#include "common/input_file.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::vector<std::string> none(const std::string&) {
  return {};
}

std::vector<std::string> ollama_host(const std::string& backend) {
  if (backend == "ollama") return {"OLLAMA_HOST"};
  return {};
}

std::vector<std::string> account(const std::string&) {
  return {"CLOUDFLARE_ACCOUNT_ID"};
}

/// The token each backend reads from the environment when no --api-token-file is given.
std::vector<std::string> token(const std::string& backend) {
  if (backend == "workers-ai") return {"CLOUDFLARE_API_TOKEN"};
  if (backend == "openai") return {"OPENAI_API_KEY"};
  if (backend == "systemone") return {"CLEF_API_KEY"};
  return {};
}

std::vector<std::string> gateway_token(const std::string&) {
  return {"CF_AIG_TOKEN"};
}

std::vector<std::string> ca_bundle(const std::string&) {
  return {"CURL_CA_BUNDLE", "SSL_CERT_FILE"};
}

std::vector<std::string> cache_directory(const std::string&) {
  return {"CLEF_CACHE_DIR"};
}

/// Keys that would hold a secret itself: refused, with the key that names a file instead.
constexpr std::pair<const char*, const char*> inline_secrets[] = {
    {"api_token", "api_token_file"}, {"api_key", "api_token_file"},  {"token", "api_token_file"},
    {"aig_token", "aig_token_file"}, {"password", "api_token_file"}, {"secret", "api_token_file"}};

const ConfigKey* key_named(const std::string& name) {
  for (const ConfigKey& key : config_keys())
    if (name == key.key) return &key;
  return nullptr;
}

Error config_error(const std::string& message, const std::string& path,
                   const toml::source_region& where) {
  return make_error(ErrorKind::invalid_input, message,
                    path + ":" + std::to_string(where.begin.line));
}

/// A scalar as its flag's argument: strings as they are, numbers as JSON would write them.
std::optional<std::string> argument_of(const toml::node& node) {
  if (auto text = node.as_string()) return text->get();
  if (auto integer = node.as_integer()) return std::to_string(integer->get());
  if (auto boolean = node.as_boolean()) return boolean->get() ? "true" : "false";
  if (auto floating = node.as_floating_point()) {
    char digits[32];
    const auto [end, error] = std::to_chars(digits, digits + sizeof digits, floating->get());
    if (error != std::errc()) return std::nullopt;
    return std::string(digits, end);
  }
  return std::nullopt;
}

/// A URL with a user name or password in it ("http://user:pass@host"): a secret too. Only a
/// value with a scheme is a URL ("@cf/cloudflare/clef-flash" is a model's name).
bool holds_credentials(const std::string& text) {
  return text.find("://") != std::string::npos && url_without_credentials(text) != text;
}

/// One key of the file: checked and turned into its flag's arguments.
Result<ConfigValue> read_value(const std::string& name, const toml::node& node,
                               const std::string& path, const std::string& profile) {
  for (const auto& [secret, instead] : inline_secrets) {
    if (name == secret) {
      return config_error("a secret may not be written in the config file: give " +
                              std::string(instead) +
                              " = \"PATH\", a file only you can read, or the environment",
                          path, node.source());
    }
  }
  const ConfigKey* key = key_named(name);
  if (key == nullptr) {
    return config_error("'" + terminal_safe(name) +
                            "' is not a setting clef knows (clef config "
                            "show lists them)",
                        path, node.source());
  }
  ConfigValue value{key, {}, path + ":" + std::to_string(node.source().begin.line), profile};
  if (const toml::array* items = node.as_array(); items && key->list) {
    if (items->empty())  // as an empty string: a run with none, silently the default host
      return config_error(name + " is an empty list: give a value or leave the key out", path,
                          node.source());
    for (const toml::node& item : *items) {
      if (!item.is_string())
        return config_error(name + " must be a list of strings", path, item.source());
      value.arguments.push_back(*item.value<std::string>());
    }
  } else {
    auto argument = argument_of(node);
    if (!argument || (key->list && !node.is_string())) {
      return config_error(name + (key->list ? " must be a string or a list of strings"
                                            : " must be a string, a number or true/false"),
                          path, node.source());
    }
    value.arguments.push_back(std::move(*argument));
  }
  for (const std::string& argument : value.arguments) {
    // As on the command line (no_empty_values), and found in every profile, used or not.
    if (argument.empty())
      return config_error(name + " is empty: give a value or leave the key out", path,
                          node.source());
    if (holds_credentials(argument)) {
      return config_error(name +
                              " holds a user name or password: a secret may not be written in "
                              "the config file (give it in the environment)",
                          path, node.source());
    }
  }
  return value;
}

/// Every key of `table` but the profiles, over what `values` already holds.
Status read_table(const toml::table& table, const std::string& path, const std::string& profile,
                  std::vector<ConfigValue>& values) {
  for (const auto& [name, node] : table) {
    const std::string key(name.str());
    if (profile.empty() && (key == "profiles" || key == "default_profile")) continue;
    auto value = read_value(key, node, path, profile);
    if (!value) return value.error();
    bool replaced = false;
    for (ConfigValue& held : values) {
      if (held.key == value->key) {
        held = value.value();
        replaced = true;
      }
    }
    if (!replaced) values.push_back(std::move(value).value());
  }
  return {};
}

/// The file's path: --config, CLEF_CONFIG, then $XDG_CONFIG_HOME/clef/config.toml, else
/// $HOME/.config/clef/config.toml. `required`: given explicitly, so it must exist.
std::string config_path(const ConfigChoice& choice, bool& required) {
  required = true;
  if (!choice.explicit_path.empty()) return choice.explicit_path;
  if (!env("CLEF_CONFIG").empty()) return env("CLEF_CONFIG");
  required = false;
  // XDG: a relative path in the variable is invalid, and ignored.
  if (env("XDG_CONFIG_HOME").rfind('/', 0) == 0)
    return env("XDG_CONFIG_HOME") + "/clef/config.toml";
  if (!env("HOME").empty()) return env("HOME") + "/.config/clef/config.toml";
  return "";
}

/// The profile asked for, and who asked: --profile, CLEF_PROFILE, the file's default_profile.
Status choose_profile(const ConfigChoice& choice, const toml::table& root, Config& config) {
  const std::string& path = config.path;
  if (!choice.profile.empty()) {
    config.profile = choice.profile;
    config.profile_source = "--profile";
  } else if (!env("CLEF_PROFILE").empty()) {
    config.profile = env("CLEF_PROFILE");
    config.profile_source = "CLEF_PROFILE";
  } else if (const toml::node* named = root.get("default_profile")) {
    if (!named->is_string())
      return config_error("default_profile must be a profile's name", path, named->source());
    config.profile = *named->value<std::string>();
    config.profile_source = "default_profile";
  }
  return {};
}

/// Every profile is checked, not only the one used: a secret or a typo in another is found
/// the first time the file is read.
Status check_profiles(const toml::table& root, const std::string& path) {
  const toml::table* profiles = root.get_as<toml::table>("profiles");
  if (profiles == nullptr) return {};
  for (const auto& [name, node] : *profiles) {
    const toml::table* profile = node.as_table();
    if (profile == nullptr)
      return config_error("profiles must be tables: [profiles.NAME]", path, node.source());
    std::vector<ConfigValue> scratch;
    if (auto read = read_table(*profile, path, std::string(name.str()), scratch); !read)
      return read.error();
  }
  return {};
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = {
      {"backend", "--backend", false, none, false},
      {"host", "--host", true, ollama_host, false},
      {"hosts_file", "--hosts", false, none, false},
      {"model", "--model", false, none, false},
      {"account_id", "--account-id", false, account, false},
      {"api_token_file", "--api-token-file", false, token, true},
      {"gateway", "--gateway", false, none, false},
      {"aig_token_file", "--aig-token-file", false, gateway_token, true},
      {"ca_cert", "--ca-cert", false, ca_bundle, false},
      {"timeout", "--timeout", false, none, false},
      {"connect_timeout", "--connect-timeout", false, none, false},
      {"retries", "--retries", false, none, false},
      {"max_retry_after", "--max-retry-after", false, none, false},
      {"cache", "--cache", false, cache_directory, false},
      {"prices", "--prices", false, none, false},
      {"concurrency", "--concurrency", false, none, false},
      {"per_host", "--per-host", false, none, false},
      {"rate", "--rate", false, none, false},
      {"rate_total", "--rate-total", false, none, false},
      {"max_cost", "--max-cost", false, none, false},
      {"metrics_push", "--metrics-push", false, none, false},
      {"metrics_job", "--metrics-job", false, none, false},
      {"metrics_interval", "--metrics-interval", false, none, false},
  };
  return keys;
}

std::string config_file_path(const ConfigChoice& choice) {
  bool required = false;
  return config_path(choice, required);
}

const ConfigValue* Config::find(const std::string& key) const {
  for (const ConfigValue& value : values)
    if (key == value.key->key) return &value;
  return nullptr;
}

std::string environment_override(const ConfigKey& key, const std::string& backend) {
  for (const std::string& name : key.environment(backend))
    if (!env(name.c_str()).empty()) return name;
  return "";
}

Result<Config> load_config(const ConfigChoice& choice) {
  Config config;
  bool required = false;
  const std::string path = config_path(choice, required);
  const bool none = path.empty() || (!required && path_kind(path) == PathKind::missing);
  struct stat link {};
  if (none && !path.empty() && ::lstat(path.c_str(), &link) == 0) {
    // The file is there, as a link to nothing or a loop: its settings would be silently gone.
    return make_error(ErrorKind::invalid_input,
                      "the config file is a symbolic link that leads to no file (or a loop)", path);
  }
  if (none) {
    // A profile asked for and no file: refused, not run with none (CLEF_PROFILE set for a CI
    // job whose config file is elsewhere would otherwise send to the default server).
    const bool by_flag = !choice.profile.empty();
    if (by_flag || !env("CLEF_PROFILE").empty()) {
      const std::string name = by_flag ? choice.profile : env("CLEF_PROFILE");
      return make_error(ErrorKind::invalid_input,
                        "there is no config file to take the profile '" + terminal_safe(name) +
                            "' from" + (path.empty() ? std::string() : ": none at " + path),
                        by_flag ? "--profile" : "CLEF_PROFILE");
    }
    return config;
  }
  // Read whole before any command runs: a FIFO or a device could hold every command up.
  if (path_kind(path) == PathKind::stream || path_kind(path) == PathKind::directory) {
    return make_error(ErrorKind::invalid_input,
                      "the config file is not a regular file (a FIFO, a device or a directory)",
                      path);
  }
  // A config file is a few lines by hand: a megabyte is far more than any.
  auto text = read_file(path, "the config file", std::cin, 1u << 20);
  if (!text) return text.error();
  toml::parse_result parsed = toml::parse(text.value(), std::string_view(path));
  if (!parsed) {
    return config_error("not TOML: " + std::string(parsed.error().description()), path,
                        parsed.error().source());
  }
  const toml::table& root = parsed.table();
  config.path = path;
  if (auto chosen = choose_profile(choice, root, config); !chosen) return chosen.error();
  if (auto top = read_table(root, path, "", config.values); !top) return top.error();
  if (const toml::node* profiles = root.get("profiles"); profiles && !profiles->is_table())
    return config_error("profiles must be tables: [profiles.NAME]", path, profiles->source());
  if (auto checked = check_profiles(root, path); !checked) return checked.error();
  if (config.profile.empty()) return config;
  const toml::table* profiles = root.get_as<toml::table>("profiles");
  const toml::node* profile = profiles ? profiles->get(config.profile) : nullptr;
  if (profile == nullptr || !profile->is_table()) {
    return make_error(ErrorKind::invalid_input,
                      "no profile '" + terminal_safe(config.profile) + "' in " + path +
                          " (a [profiles." + terminal_safe(config.profile) + "] table)",
                      config.profile_source);
  }
  if (auto own = read_table(*profile->as_table(), path, config.profile, config.values); !own)
    return own.error();
  return config;
}

Status check_config_values(const Config& config, const CLI::App& command) {
  for (const ConfigValue& value : config.values) {
    // CLI11 2.1 gives an option's validators through non-const accessors only; running one
    // changes nothing of the option (each gets its own copy of the text).
    auto* flag = const_cast<CLI::Option*>(command.get_option_no_throw(value.key->flag));
    if (flag == nullptr) continue;
    for (const std::string& argument : value.arguments) {
      for (int i = 0;; ++i) {
        CLI::Validator* check = nullptr;
        try {
          check = flag->get_validator(i);
        } catch (const CLI::OptionNotFound&) {
          break;  // no more checks
        }
        std::string text = argument;
        if (const std::string why = (*check)(text); !why.empty()) {
          return make_error(ErrorKind::invalid_input,
                            std::string(value.key->key) + " = " + terminal_safe_line(argument) +
                                ": " + terminal_safe_line(why),
                            value.where);
        }
      }
    }
  }
  return {};
}

std::vector<std::string> config_arguments(const Config& config, const CLI::App& command) {
  std::string backend = "ollama";
  if (const ConfigValue* from_file = config.find("backend")) backend = from_file->arguments.front();
  const CLI::Option* backend_flag = command.get_option_no_throw("--backend");
  if (backend_flag != nullptr && backend_flag->count() > 0)
    backend = to_string(backend_flag->as<Backend>());  // as the command will read it
  std::vector<std::string> arguments;
  for (const ConfigValue& value : config.values) {
    const CLI::Option* flag = command.get_option_no_throw(value.key->flag);
    if (flag == nullptr || flag->count() > 0) continue;
    if (!environment_override(*value.key, backend).empty()) continue;
    // Only batch and eval send to several hosts: the others take a list's first.
    const bool several = command.get_name() == "batch" || command.get_name() == "eval";
    const std::size_t count = value.key->list && !several ? 1 : value.arguments.size();
    // FLAG=VALUE: a value that starts with '-' stays a value.
    for (std::size_t i = 0; i < count && i < value.arguments.size(); ++i)
      arguments.push_back(std::string(value.key->flag) + "=" + value.arguments[i]);
  }
  return arguments;
}

}  // namespace clef::cli
