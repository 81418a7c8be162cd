// The implementation of cache_command.hpp: `clef cache stats|clear`.
#include "commands/cache_command.hpp"

#include <cstdlib>

#include "clef/cache.hpp"
#include "common/exit_codes.hpp"
#include "common/terminal_text.hpp"
#include "output/error_report.hpp"

namespace clef::cli {

CLI::App* add_cache_command(CLI::App& app, CacheFlags& flags) {
  CLI::App* cache = app.add_subcommand("cache", "Show or empty the decision cache (--cache DIR)");
  cache->footer(
      "Examples:\n"
      "  clef cache stats --cache ~/.cache/clef\n"
      "  CLEF_CACHE_DIR=~/.cache/clef clef cache clear\n");
  cache->add_option("ACTION", flags.action, "stats | clear")
      ->required()
      ->check(CLI::IsMember({"stats", "clear"}));
  cache->add_option("--cache", flags.directory, "The cache directory (default: CLEF_CACHE_DIR)");
  return cache;
}

int run_cache_command(const CacheFlags& flags, const Context& context) {
  std::string directory = flags.directory;
  if (directory.empty() && std::getenv("CLEF_CACHE_DIR")) directory = std::getenv("CLEF_CACHE_DIR");
  if (directory.empty()) {
    print_error(context, "no cache directory: give --cache DIR or set CLEF_CACHE_DIR");
    return as_int(ExitCode::usage);
  }
  // A directory that is not there is an error, not "0 entries": the path is probably wrong.
  auto stats = flags.action == "clear" ? clear_cache(directory) : cache_stats(directory);
  if (!stats) {
    print_error(context, stats.error().message);
    return as_int(ExitCode::usage);
  }
  context.out << (flags.action == "clear" ? "removed " : "") << stats->entries << " entries, "
              << stats->bytes << " bytes on disk" << (flags.action == "clear" ? " from " : " in ")
              << terminal_safe(directory) << "\n";
  return as_int(ExitCode::ok);
}

}  // namespace clef::cli
