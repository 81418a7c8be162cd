// Man pages (roff, man(7)) read off the CLI11 definitions themselves: a command's description,
// its arguments and flags with their help and defaults, its examples (the footer --help prints
// too), then the exit codes, environment and files every clef page shares. The build writes
// them (clef_man_pages), so a page cannot say what --help does not.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace clef::cli {

struct ManPageSource {
  const CLI::App* command = nullptr;
  std::string page;                   ///< "clef-batch": the page's name, section 1.
  std::string command_line;           ///< "clef batch": what a user types.
  std::string version;                ///< "clef 0.1.0", the page's footer.
  std::vector<std::string> see_also;  ///< The other pages, by name.
  bool lists_commands = false;        ///< clef(1): its commands, each with its page.
};

/// The whole page, in roff.
std::string man_page(const ManPageSource& source);

}  // namespace clef::cli
