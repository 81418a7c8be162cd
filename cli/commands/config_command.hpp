// `clef config show`: what the settings a command would use are, and where each comes from
// (the environment, the config file and its profile, or clef's default), secrets masked.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/context.hpp"
#include "flags/config_file.hpp"

namespace clef::cli {

struct ConfigFlags {
  std::string action;   ///< show
  std::string backend;  ///< --backend: whose environment variables count (default: the file's)
  bool json = false;
};

CLI::App* add_config_command(CLI::App& app, ConfigFlags& flags);
/// `defaults`: the command whose flags' defaults are shown for keys nothing sets (clef batch,
/// which has every key's flag).
int run_config_command(const ConfigFlags& flags, const ConfigChoice& choice,
                       const CLI::App& defaults, const Context& context);

}  // namespace clef::cli
