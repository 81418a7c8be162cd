// The implementation of suggestion.hpp: "did you mean" for a mistyped command or flag.
#include "output/suggestion.hpp"

#include <algorithm>
#include <vector>

namespace clef::cli {
namespace {

/// Edit distance between two short names (command names: a handful of letters).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// Of `candidates`, the one `typed` was most likely meant to be: the nearest within two edits
/// (more than two edits away is another word, not a typo), or "".
std::string closest(const std::string& typed, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(typed, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace

std::string closest_command(const CLI::App& app, const std::string& typed) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) names.push_back(command->get_name());
  return closest(typed, names);
}

std::string suggestion(const CLI::App& app, const CLI::ParseError& error) {
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr) return {};
  std::vector<const CLI::App*> scopes = {&app};
  for (const CLI::App* command : app.get_subcommands()) scopes.push_back(command);
  std::vector<std::string> flags;
  for (const CLI::App* scope : scopes) {
    for (const CLI::Option* option : scope->get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    }
  }
  const std::string text = error.what();
  std::string hints;
  for (std::size_t at = text.find(" -"); at != std::string::npos; at = text.find(" -", at + 1)) {
    const std::string typed = text.substr(at + 1, text.find(' ', at + 1) - at - 1);
    const std::string flag = typed.substr(0, typed.find('='));
    const std::string best = closest(flag, flags);
    if (!best.empty() && best != flag) hints += (hints.empty() ? "" : ", ") + best;
  }
  return hints.empty() ? std::string() : " (did you mean `" + hints + "`?)";
}

}  // namespace clef::cli
