// `clef models` and `clef doctor`: what is on the server, and what to fix.
#pragma once

#include <CLI/CLI.hpp>

#include "common/context.hpp"
#include "flags/connection.hpp"

namespace clef::cli {

struct ModelsFlags {
  ConnectionFlags connection;
  bool json = false;
};

CLI::App* add_models_command(CLI::App& app, ModelsFlags& flags);
int run_models(const ModelsFlags& flags, const Context& context);

CLI::App* add_doctor_command(CLI::App& app, ConnectionFlags& flags);
int run_doctor(const ConnectionFlags& flags, const Context& context);

}  // namespace clef::cli
