// Rules every command's flags follow.
#pragma once

#include <CLI/CLI.hpp>

namespace clef::cli {

/// A repeatable option takes exactly one value each time it is given, so the positional STATE
/// after `--expect team=billing "my text"` stays the state.
inline CLI::Option* one_value_each(CLI::Option* option) {
  return option->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace clef::cli
