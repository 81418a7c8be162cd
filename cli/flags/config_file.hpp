// The config file: settings typed once instead of on every command line, in named profiles.
// $XDG_CONFIG_HOME/clef/config.toml (else ~/.config/clef/config.toml), or --config / CLEF_CONFIG;
// a value there is used only when neither the command line nor the environment gives one.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clef/result.hpp"

namespace clef::cli {

/// One setting a config file may hold: its key, the flag it stands for, and the environment
/// variables that outrank it for a backend (a token's variable depends on the backend).
struct ConfigKey {
  const char* key;
  const char* flag;
  bool list;  ///< An array of strings, each given as its own flag ("host").
  std::vector<std::string> (*environment)(const std::string& backend);
  bool secret_file;  ///< A path to a file holding a secret: the file's content is never shown.
};

/// Every key a config file may hold, in the order `clef config show` lists them.
const std::vector<ConfigKey>& config_keys();

/// One key's value as the file gives it: as flag arguments, and where it was read.
struct ConfigValue {
  const ConfigKey* key = nullptr;
  std::vector<std::string> arguments;  ///< One per flag occurrence (a list: one per item).
  std::string where;                   ///< "FILE:LINE".
  std::string profile;                 ///< "" when from the file's top level.
};

struct Config {
  std::string path;            ///< "" when there is no file (none given, none at the default).
  std::string profile;         ///< The profile used, "" for none.
  std::string profile_source;  ///< "--profile", "CLEF_PROFILE" or "default_profile".
  std::vector<ConfigValue> values;

  /// The value of `key`, or nullptr.
  const ConfigValue* find(const std::string& key) const;
};

/// Where the file is: `explicit_path` (--config) else CLEF_CONFIG, else the XDG default; with
/// `explicit_path` or CLEF_CONFIG the file must exist.
struct ConfigChoice {
  std::string explicit_path;  ///< --config FILE
  std::string profile;        ///< --profile NAME
};

/// The file load_config reads: --config, CLEF_CONFIG, $XDG_CONFIG_HOME/clef/config.toml, else
/// $HOME/.config/clef/config.toml ("" when none of them is set).
std::string config_file_path(const ConfigChoice& choice);

/// Reads the file and picks the profile: --profile, else CLEF_PROFILE, else the file's
/// `default_profile`. Refused, naming the file and line: not TOML, over 1 MiB, a key clef does
/// not know, a value of the wrong type, a secret written inline (`api_token = "…"`: give
/// `api_token_file`), a profile the file does not have.
Result<Config> load_config(const ConfigChoice& choice);

/// The environment variable of `key` that is set and applies to `backend`, or "".
std::string environment_override(const ConfigKey& key, const std::string& backend);

/// The arguments the file adds to `command`'s: each key whose flag `command` has, that the
/// command line did not give and no environment variable outranks, for the backend the command
/// will use (its --backend, else the file's).
std::vector<std::string> config_arguments(const Config& config, const CLI::App& command);

/// Each value of the file put to the checks of its flag on `command` (a range, a number, one of
/// a few words), so that a value every command would refuse is refused where it is written
/// ("FILE:LINE"), by `clef config show` too; keys `command` has no flag for are left alone.
Status check_config_values(const Config& config, const CLI::App& command);

}  // namespace clef::cli
