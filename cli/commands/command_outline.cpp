// The implementation of command_outline.hpp: the command line read off its CLI11 definitions.
#include "commands/command_outline.hpp"

#include <cctype>

namespace clef::cli {
namespace {

bool is_word(const std::string& text) {
  if (text.empty()) return false;
  for (const unsigned char c : text) {
    if (!std::isalnum(c) && c != '-' && c != '_') return false;
  }
  return true;
}

/// "jsonl | csv | tsv (default: …)" → {jsonl, csv, tsv}; none unless it starts that way.
std::vector<std::string> choices_in(const std::string& help) {
  std::vector<std::string> words;
  std::size_t at = 0;
  for (;;) {
    std::size_t end = at;
    while (end < help.size() && !std::isspace(static_cast<unsigned char>(help[end]))) ++end;
    const std::string word = help.substr(at, end - at);
    if (!is_word(word)) break;
    words.push_back(word);
    if (help.compare(end, 3, " | ") != 0) break;
    at = end + 3;
  }
  return words.size() >= 2 ? words : std::vector<std::string>{};
}

/// A value that is a file: its type name says so (FILE, DIR), or its help names a file ("@FILE"
/// is an inline value that may point at a file, not a file name).
bool names_a_file(const std::string& help, const std::string& type_name = {}) {
  if (type_name == "FILE" || type_name == "DIR" || type_name == "PATH") return true;
  for (const char* word : {"FILE", "file", "DIR", "directory"}) {
    for (auto at = help.find(word); at != std::string::npos; at = help.find(word, at + 1)) {
      if (at == 0 || help[at - 1] != '@') return true;
    }
  }
  return false;
}

std::string first_line(const std::string& help) {
  const std::string line = help.substr(0, help.find('\n'));
  return line.size() > 100 ? line.substr(0, 97) + "..." : line;
}

FlagOutline flag_of(const CLI::Option& option) {
  FlagOutline flag;
  for (const std::string& name : option.get_snames()) flag.names.push_back("-" + name);
  for (const std::string& name : option.get_lnames()) flag.names.push_back("--" + name);
  flag.help = first_line(option.get_description());
  if (option.get_items_expected_max() == 0) return flag;  // a switch
  flag.choices = choices_in(flag.help);
  flag.value = !flag.choices.empty()                             ? FlagOutline::Value::choice
               : names_a_file(flag.help, option.get_type_name()) ? FlagOutline::Value::file
                                                                 : FlagOutline::Value::text;
  return flag;
}

/// The flags of `app`; with `command`, what its positional arguments take too.
std::vector<FlagOutline> flags_of(const CLI::App& app, CommandOutline* command) {
  std::vector<FlagOutline> flags;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() && option->get_lnames().empty() && option->get_snames().empty()) {
      if (!command) continue;
      const std::string& help = option->get_description();
      if (names_a_file(help)) command->file_arguments = true;
      for (std::string& word : choices_in(first_line(help)))
        command->argument_choices.push_back(std::move(word));
      continue;
    }
    flags.push_back(flag_of(*option));
  }
  return flags;
}

}  // namespace

CliOutline outline_of(const CLI::App& app) {
  CliOutline outline;
  outline.global_flags = flags_of(app, nullptr);
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    CommandOutline entry;
    entry.name = command->get_name();
    entry.help = first_line(command->get_description());
    entry.flags = flags_of(*command, &entry);
    outline.commands.push_back(std::move(entry));
  }
  return outline;
}

}  // namespace clef::cli
