// How the clef command tells a person what went wrong and what to do next.
#pragma once

#include <string>

#include "clef/error.hpp"
#include "common/context.hpp"
#include "common/terminal_text.hpp"
#include "flags/connection.hpp"

namespace clef::cli {

/// Prints "clef: error: <message>" and, where there is one, what to do next (both made
/// terminal_safe).
void print_error(const Context& context, const std::string& message, const std::string& hint = {});

/// Prints `error` with the next step for its kind and returns its exit code.
int report(const Context& context, const Error& error, const ConnectionFlags& flags);

}  // namespace clef::cli
