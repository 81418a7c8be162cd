// The implementation of run.hpp: the clef command, as a function tests can call.
#include "run.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch/batch_command.hpp"
#include "batch/merge_command.hpp"
#include "clef/version.hpp"
#include "commands/ask_command.hpp"
#include "commands/cache_command.hpp"
#include "commands/completion_command.hpp"
#include "commands/config_command.hpp"
#include "commands/man_page.hpp"
#include "commands/server_commands.hpp"
#include "common/exit_codes.hpp"
#include "common/flag_rules.hpp"
#include "common/mock_flags.hpp"
#include "common/quiet_stderr.hpp"
#include "eval/diff_command.hpp"
#include "eval/eval_command.hpp"
#include "output/error_report.hpp"
#include "output/suggestion.hpp"

namespace clef::cli {
namespace {

/// A global option whose value is the next argument.
bool takes_value(const std::string& arg) {
  return arg == "--color" || arg == "--config" || arg == "--profile";
}

bool env_is(const char* name, const char* value) {
  const char* set = std::getenv(name);
  return set != nullptr && std::string(set) == value;
}

bool env_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

/// --color auto: colour only for a terminal that can show it (not TERM=dumb) and a user who
/// has not asked for none (NO_COLOR, https://no-color.org).
bool use_color(const std::string& choice, bool stdout_is_tty) {
  if (choice == "always") return true;
  if (choice == "never") return false;
  return stdout_is_tty && !env_set("NO_COLOR") && !env_is("TERM", "dumb");
}

const CLI::App* find_command(const CLI::App& app, const std::string& name) {
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->check_name(name)) return command;
  }
  return nullptr;
}

/// `clef help` and `clef help COMMAND` (`clef help mock` is clef-mock's, run by main()).
int run_help(const CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (takes_value(arg))
      ++i;
    else if (arg != "help" && (arg.empty() || arg[0] != '-'))
      names.push_back(arg);
  }
  if (names.empty()) {
    out << app.help();
    return as_int(ExitCode::ok);
  }
  const CLI::App* command = names.size() == 1 ? find_command(app, names[0]) : nullptr;
  if (command == nullptr) {
    const std::string near = names.size() == 1 ? closest_command(app, names[0]) : std::string();
    err << "clef: error: `clef help` takes one command name"
        << (names.size() == 1 ? ", and '" + names[0] + "' is not one" : std::string())
        << (near.empty() ? std::string() : " (did you mean `" + near + "`?)") << "\n";
    return as_int(ExitCode::usage);
  }
  out << command->help("clef");
  return as_int(ExitCode::ok);
}

/// Where the command's name is: the first argument that is not a global option (or its
/// value), or argc when there is none.
int command_index(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (takes_value(arg)) {
      ++i;  // its value
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    return i;
  }
  return argc;
}

/// The command's name as typed, or "".
std::string typed_command(int argc, char** argv) {
  const int at = command_index(argc, argv);
  return at < argc ? std::string(argv[at]) : std::string();
}

}  // namespace

namespace {

constexpr const char* root_description =
    "clef: ask System One decision models typed questions (POST /v1/systemone)";

/// Every command's flags and its CLI11 subcommand, declared on one app.
struct Commands {
  std::string color = "auto";
  bool quiet = false;
  AskFlags ask_flags;
  BatchFlags batch_flags;
  CacheFlags cache_flags;
  EvalFlags eval_flags;
  DiffFlags diff_flags;
  ModelsFlags models_flags;
  ConnectionFlags doctor_flags;
  MergeFlags merge_flags;
  ConfigFlags config_flags;
  ConfigChoice config_choice;
  std::string completion_shell;
  CLI::App& root;
  CLI::App* ask = nullptr;
  CLI::App* batch = nullptr;
  CLI::App* mock = nullptr;
  CLI::App* cache = nullptr;
  CLI::App* eval = nullptr;
  CLI::App* diff = nullptr;
  CLI::App* models = nullptr;
  CLI::App* doctor = nullptr;
  CLI::App* merge = nullptr;
  CLI::App* completion = nullptr;
  CLI::App* config = nullptr;

  explicit Commands(CLI::App& app) : root(app) {
    app.set_version_flag("--version", [] {
      return std::string("clef ") + clef::version + "\n" + clef::transport_version();
    });
    app.require_subcommand(1);
    app.footer(
        "Examples:\n"
        "  clef ask --state-json '{\"ticket\": \"I was charged twice.\"}' \\\n"
        "    --choice 'team: Which team? | billing=Payments | technical=Bugs | other=Anything "
        "else'\n"
        "  clef batch tickets.jsonl -q questions.json -o routed.jsonl -j 16\n"
        "  clef batch --help\n"
        "\n"
        "Exit codes: 0 ok, 1 a gate failed, 2 usage or bad input, 3 credentials or a spent "
        "budget, 4 server error, 5 transport, 6 some items failed, 7 output not written, 8 "
        "abstained, 9 not recorded, 10 merge incomplete, 130 interrupted (man clef, EXIT "
        "STATUS).\n");
    app.fallthrough();  // --color may come before or after the command
    app.add_option("--color", color,
                   "auto | always | never (auto: only on a terminal, not with TERM=dumb or "
                   "NO_COLOR)")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
    // No short form: -q is --questions in every command, and a script that meant "quiet" must
    // not have its next argument read as a questions file, nor the other way round.
    app.add_flag("--quiet", quiet,
                 "Only errors, warnings (with their next step) and failed --require gates on "
                 "stderr: no progress, no "
                 "summaries; outputs and exit codes are the same");
    app.add_option("--config", config_choice.explicit_path,
                   "The config file (default: CLEF_CONFIG, else $XDG_CONFIG_HOME/clef/config.toml "
                   "or ~/.config/clef/config.toml when it exists)")
        ->type_name("FILE");
    app.add_option("--profile", config_choice.profile,
                   "The config file's [profiles.NAME] to use (default: CLEF_PROFILE, else the "
                   "file's default_profile)")
        ->type_name("NAME");
    ask = add_ask_command(app, ask_flags);
    batch = add_batch_command(app, batch_flags);
    merge = add_merge_command(app, merge_flags);
    // Listed for --help; the clef executable hands `clef mock …` to clef-mock before parsing.
    mock = app.add_subcommand("mock",
                              "Serve a mock System One server on 127.0.0.1 (clef mock --help)");
    mock->prefix_command();
    cache = add_cache_command(app, cache_flags);
    eval = add_eval_command(app, eval_flags);
    diff = add_diff_command(app, diff_flags);
    models = add_models_command(app, models_flags);
    doctor = add_doctor_command(app, doctor_flags);
    completion = add_completion_command(app, completion_shell);
    config = add_config_command(app, config_flags);
    one_value_per_occurrence(app);
    decimal_numbers_only(app);
    no_empty_values(app);
  }

  int dispatch(const Context& context) {
    if (ask->parsed()) return run_ask(ask_flags, *ask, context);
    if (batch->parsed()) return run_batch_command(batch_flags, *batch, context);
    if (merge->parsed()) return run_merge(merge_flags, context);
    if (mock->parsed()) {
      context.err << "clef: error: `clef mock` is run by the clef executable (it starts "
                     "clef-mock)\n";
      return as_int(ExitCode::usage);
    }
    if (cache->parsed()) return run_cache_command(cache_flags, context);
    if (eval->parsed()) return run_eval(eval_flags, *eval, context);
    if (diff->parsed()) return run_diff(diff_flags, *diff, context);
    if (models->parsed()) return run_models(models_flags, context);
    if (doctor->parsed()) return run_doctor(doctor_flags, context);
    if (completion->parsed()) return run_completion(root, completion_shell, context);
    if (config->parsed()) return run_config_command(config_flags, config_choice, *batch, context);
    return as_int(ExitCode::usage);
  }
};

/// What happens before CLI11 parses: `clef` alone, `clef help`, a command that does not exist.
/// None when the command line goes on to be parsed.
std::optional<int> before_parsing(CLI::App& app, int argc, char** argv, std::ostream& out,
                                  std::ostream& err) {
  if (argc <= 1) {  // `clef` alone: say what there is, as a usage error
    err << app.help();
    return as_int(ExitCode::usage);
  }
  const std::string command_name = typed_command(argc, argv);
  if (command_name == "help") return run_help(app, argc, argv, out, err);
  if (!command_name.empty() && find_command(app, command_name) == nullptr) {
    // CLI11 would only say "A subcommand is required".
    const std::string near = closest_command(app, command_name);
    err << "clef: error: '" << command_name << "' is not a clef command"
        << (near.empty() ? std::string() : " (did you mean `" + near + "`?)") << "\n";
    err << "clef: commands: ask, batch, merge, eval, diff, mock, cache, models, doctor, "
           "completion, config; "
           "`clef help "
           "COMMAND` "
           "shows one\n";
    return as_int(ExitCode::usage);
  }
  return std::nullopt;
}

/// Parses the command line; an exit code when that is the whole run (help, version, an error).
/// `with_config`: the config file's settings are in the line too, and a mistake may be the
/// file's: no advice about the command line's syntax then.
std::optional<int> parse(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err,
                         bool with_config = false) {
  try {
    refuse_empty_equals(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    // A command's usage line names the program too ("Usage: clef batch"), as typed.
    out << (app.get_subcommands().empty() ? app.help()
                                          : app.get_subcommands().front()->help("clef"));
    return as_int(ExitCode::ok);
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return as_int(ExitCode::ok);
  } catch (const CLI::ParseError& e) {
    err << "clef: error: " << e.what() << suggestion(app, e) << "\n";
    if (!with_config) err << "clef: run `clef --help` or `clef COMMAND --help` for the syntax\n";
    return as_int(ExitCode::usage);
  }
  return std::nullopt;
}

/// Results are only delivered once stdout takes them: a full disk or a closed pipe makes the
/// run a failure (exit 7), whatever the command decided, so no script trusts a lost answer.
int after_flushing(int code, const Context& context) {
  errno = 0;
  context.out.flush();
  if (context.out || code == as_int(ExitCode::output) || code == as_int(ExitCode::interrupted))
    return code;
  const int why = errno;
  print_error(context,
              std::string("cannot write the output to stdout") +
                  (why == EPIPE ? ": its reader closed it"
                   : why != 0   ? std::string(": ") + std::strerror(why)
                                : std::string()),
              "nothing written there can be trusted; write somewhere with space, or to a file");
  return as_int(ExitCode::output);
}

/// One parse of the command line: the app and the flags it filled.
struct ParsedCommandLine {
  CLI::App app{root_description, "clef"};
  Commands commands{app};
};

/// The command line with the config file's settings for the parsed command inserted after the
/// command's name (`added`, as FLAG=VALUE); nothing added when the file gives none of the
/// command's flags, or the command takes none of its keys.
struct ConfiguredCommandLine {
  std::vector<std::string> arguments;
  std::vector<std::string> added;
  std::string path;
};

Result<ConfiguredCommandLine> configure(const ParsedCommandLine& parsed, int argc, char** argv) {
  const auto chosen = parsed.app.get_subcommands();
  if (chosen.empty() || chosen.front() == parsed.commands.config) return ConfiguredCommandLine{};
  const CLI::App& command = *chosen.front();
  const bool takes_any = std::any_of(config_keys().begin(), config_keys().end(), [&](auto& key) {
    return command.get_option_no_throw(key.flag) != nullptr;
  });
  if (!takes_any) return ConfiguredCommandLine{};
  auto config = load_config(parsed.commands.config_choice);
  if (!config) return config.error();
  if (auto checked = check_config_values(config.value(), command); !checked) return checked.error();
  ConfiguredCommandLine line{{}, config_arguments(config.value(), command), config->path};
  if (line.added.empty()) return line;
  const int at = command_index(argc, argv);
  line.arguments.assign(argv, argv + std::min(at + 1, argc));
  line.arguments.insert(line.arguments.end(), line.added.begin(), line.added.end());
  for (int i = at + 1; i < argc; ++i) line.arguments.emplace_back(argv[i]);
  return line;
}

}  // namespace

int run(int argc, char** argv, std::ostream& out, std::ostream& err, const RunOptions& options) {
  auto parsed = std::make_unique<ParsedCommandLine>();
  if (auto done = before_parsing(parsed->app, argc, argv, out, err)) return *done;
  if (auto done = parse(parsed->app, argc, argv, out, err)) return *done;
  auto configured = configure(*parsed, argc, argv);
  if (!configured) {
    err << "clef: error: " << configured.error().message << " (" << configured.error().where
        << ")\n";
    return as_int(ExitCode::usage);
  }
  if (!configured->added.empty()) {
    // The file's settings as flags after the command's name, parsed again from the start.
    std::vector<char*> with_config;
    for (auto& argument : configured->arguments) with_config.push_back(argument.data());
    parsed = std::make_unique<ParsedCommandLine>();
    if (auto done = parse(parsed->app, static_cast<int>(with_config.size()), with_config.data(),
                          out, err, true)) {
      std::string added;
      for (const auto& flag : configured->added) added += " " + flag;
      err << "clef: the config file " << configured->path << " added:" << added << "\n";
      return *done;
    }
  }
  Commands& commands = parsed->commands;
  QuietStderr quiet_buffer(err);
  std::ostream quiet_err(&quiet_buffer);
  // A dumb terminal cannot redraw a progress bar either: it gets plain lines.
  const Context context{out,
                        commands.quiet ? quiet_err : err,
                        options.in ? *options.in : std::cin,
                        options.stdin_is_piped,
                        options.stdout_is_tty,
                        options.stderr_is_tty && !env_is("TERM", "dumb"),
                        use_color(commands.color, options.stdout_is_tty),
                        options.stop,
                        options.cancel};
  return after_flushing(commands.dispatch(context), context);
}

std::vector<std::string> options_that_swallow_arguments() {
  CLI::App app{root_description, "clef"};
  Commands commands(app);
  CLI::App mock_app{"clef mock"};
  MockFlags mock_flags;
  declare_mock_flags(mock_app, mock_flags);
  auto found = options_that_swallow_arguments(app);
  for (auto& name : options_that_swallow_arguments(mock_app)) found.push_back("mock " + name);
  return found;
}

namespace {

/// clef(1) first, then one page per command; `clef mock` is described by clef-mock's own flags.
std::vector<ManPageSource> man_page_sources(const CLI::App& app, const CLI::App& mock_app) {
  const std::string version = std::string("clef ") + clef::version;
  std::vector<ManPageSource> pages{{&app, "clef", "clef", version, {}, true}};
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string name = command->get_name();
    pages.push_back(
        {name == "mock" ? &mock_app : command, "clef-" + name, "clef " + name, version, {}, false});
  }
  for (ManPageSource& page : pages) {
    for (const ManPageSource& other : pages)
      if (other.page != page.page) page.see_also.push_back(other.page);
  }
  return pages;
}

}  // namespace

int write_man_pages(const std::string& directory, const std::vector<std::string>& expected,
                    std::ostream& err) {
  CLI::App app{root_description, "clef"};
  Commands commands(app);
  CLI::App mock_app{mock_description, "clef mock"};
  MockFlags mock_flags;
  declare_mock_flags(mock_app, mock_flags);
  const std::vector<ManPageSource> pages = man_page_sources(app, mock_app);
  std::vector<std::string> names;
  for (const ManPageSource& page : pages) names.push_back(page.page);
  std::vector<std::string> wanted = expected;
  std::sort(names.begin(), names.end());
  std::sort(wanted.begin(), wanted.end());
  if (names != wanted) {
    err << "clef_man_pages: the commands make the pages";
    for (const std::string& name : names) err << " " << name;
    err << "; the build installs";
    for (const std::string& name : wanted) err << " " << name;
    err << " (cli/CMakeLists.txt: clef_man_pages)\n";
    return 1;
  }
  for (const ManPageSource& page : pages) {
    const std::string path = directory + "/" + page.page + ".1";
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << man_page(page);
    file.close();
    if (!file) {
      err << "clef_man_pages: cannot write " << path << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace clef::cli
