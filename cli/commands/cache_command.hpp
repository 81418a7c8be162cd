// `clef cache stats|clear`: what the decision cache holds, and emptying it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/context.hpp"

namespace clef::cli {

struct CacheFlags {
  std::string action;     ///< stats | clear
  std::string directory;  ///< Empty: CLEF_CACHE_DIR.
};

CLI::App* add_cache_command(CLI::App& app, CacheFlags& flags);
int run_cache_command(const CacheFlags& flags, const Context& context);

}  // namespace clef::cli
