#include "run.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "ask_command.hpp"
#include "batch_command.hpp"
#include "clef/version.hpp"
#include "exit_codes.hpp"
#include "server_commands.hpp"

namespace clef::cli {
namespace {

bool no_color_requested() {
  const char* value = std::getenv("NO_COLOR");
  return value != nullptr && value[0] != '\0';
}

}  // namespace

int run(int argc, char** argv, std::ostream& out, std::ostream& err, const RunOptions& options) {
  CLI::App app{"clef: ask System One decision models typed questions (POST /v1/systemone)", "clef"};
  app.set_version_flag("--version", std::string("clef ") + clef::version);
  app.require_subcommand(1);

  AskFlags ask_flags;
  CLI::App* ask = add_ask_command(app, ask_flags);
  BatchFlags batch_flags;
  CLI::App* batch = add_batch_command(app, batch_flags);
  ModelsFlags models_flags;
  CLI::App* models = add_models_command(app, models_flags);
  ConnectionFlags doctor_flags;
  CLI::App* doctor = add_doctor_command(app, doctor_flags);

  const Context context{out,
                        err,
                        options.in ? *options.in : std::cin,
                        options.stdin_is_piped,
                        options.stdout_is_tty,
                        options.stderr_is_tty,
                        options.stdout_is_tty && !no_color_requested(),
                        options.stop,
                        options.cancel};
  if (argc <= 1) {  // `clef` alone: say what there is, as a usage error
    err << app.help();
    return as_int(ExitCode::usage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << (app.get_subcommands().empty() ? app.help() : app.get_subcommands().front()->help());
    return as_int(ExitCode::ok);
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return as_int(ExitCode::ok);
  } catch (const CLI::ParseError& e) {
    err << "clef: error: " << e.what() << "\n";
    err << "clef: run `clef --help` or `clef COMMAND --help` for the syntax\n";
    return as_int(ExitCode::usage);
  }
  if (ask->parsed()) return run_ask(ask_flags, *ask, context);
  if (batch->parsed()) return run_batch_command(batch_flags, *batch, context);
  if (models->parsed()) return run_models(models_flags, context);
  if (doctor->parsed()) return run_doctor(doctor_flags, context);
  return as_int(ExitCode::usage);
}

}  // namespace clef::cli
