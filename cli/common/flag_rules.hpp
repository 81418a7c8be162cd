// Rules every command's flags follow.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

namespace clef::cli {

/// Numbers are written in decimal: CLI11's conversions (and strtod) read "0x10" as 16, which no
/// one means by a rate, a count or a timeout. Why `text` is refused, or "".
inline std::string not_decimal(const std::string& text) {
  return text.find_first_of("xX") == std::string::npos ? std::string()
                                                       : "not a decimal number: " + text;
}

/// CLI11's Range lets "nan" through (no comparison with it is true): a number flag must be a
/// finite number, as `finite_number() & CLI::Range(low, high)`. Decimal only (not_decimal): an
/// option named for its meaning (type_name("USD")) is not one decimal_numbers_only can find.
inline CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) {
        if (auto why = not_decimal(text); !why.empty()) return why;
        try {
          std::size_t used = 0;
          const double value = std::stod(text, &used);
          if (used == text.size() && std::isfinite(value)) return std::string();
        } catch (const std::exception&) {
        }
        return "not a finite number: " + text;
      },
      "FINITE");
}

/// not_decimal for every option of `app` and of its commands whose value CLI11 names a number
/// (INT, UINT, FLOAT), with no description, so its --help is unchanged.
inline void decimal_numbers_only(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type.rfind("INT", 0) != 0 && type.rfind("UINT", 0) != 0 && type.rfind("FLOAT", 0) != 0)
      continue;
    option->check(CLI::Validator([](std::string& text) { return not_decimal(text); }, ""));
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    decimal_numbers_only(*command);
}

/// What no_empty_values and refuse_empty_equals say after the option's name.
inline constexpr const char* empty_value_refusal = "is empty (a variable that was not set?)";

/// An option given an empty value is refused, not taken as not given: `--replay "$CASSETTE"`
/// with the variable unset went to the network, `--record ""` recorded nothing, `--cache ""` ran
/// without a cache. For every option of `app` and of its commands that takes a value (not the
/// positional arguments, which each command judges: an empty state has its own message), with
/// no description, so its --help is unchanged. An option's own check of the empty value, added
/// before, speaks first.
inline void no_empty_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_positional() || option->get_items_expected_max() == 0) continue;
    option->check(CLI::Validator(
        [](std::string& text) {
          return text.empty() ? std::string(empty_value_refusal) : std::string();
        },
        ""));
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    no_empty_values(*command);
}

/// no_empty_values for `--record=` with nothing after the '=' (`--record=$UNSET`): CLI11 takes
/// the next argument as the value there (a state text, an input file), so the empty value never
/// reaches a check. Thrown as CLI11's own validation error, before the line is parsed; "--"
/// ends the flags.
inline void refuse_empty_equals(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument(argv[i]);
    if (argument == "--") return;
    if (argument.size() > 3 && argument.rfind("--", 0) == 0 &&
        argument.find('=') == argument.size() - 1) {
      throw CLI::ValidationError(argument.substr(0, argument.size() - 1), empty_value_refusal);
    }
  }
}

/// A repeatable option takes exactly one value each time it is given, so the positional STATE
/// after `--expect team=billing "my text"` stays the state.
inline CLI::Option* one_value_each(CLI::Option* option) {
  return option->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

/// one_value_each for every option of `app` and its commands that takes several values (a
/// std::vector): CLI11's default lets `--host URL tickets.jsonl` take the input as a second
/// host. Positional arguments (INPUT, SHARD_OUTPUT…) keep taking all that is left.
inline void one_value_per_occurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (!option->get_positional() && option->get_items_expected_max() > 1) one_value_each(option);
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    one_value_per_occurrence(*command);
}

/// "COMMAND --flag" for every option of `app` and its commands that still takes more than one
/// value after a flag (none, once one_value_per_occurrence has run).
inline std::vector<std::string> options_that_swallow_arguments(const CLI::App& app,
                                                               const std::string& prefix = "") {
  std::vector<std::string> found;
  for (const CLI::Option* option : app.get_options()) {
    if (!option->get_positional() && option->get_items_expected_max() > 1 &&
        option->get_allow_extra_args())
      found.push_back(prefix + option->get_name());
  }
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    auto inner = options_that_swallow_arguments(*command, prefix + command->get_name() + " ");
    found.insert(found.end(), inner.begin(), inner.end());
  }
  return found;
}

}  // namespace clef::cli
