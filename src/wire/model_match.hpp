// Internal: whether the model a server says answered is the one that was asked for, in the forms
// servers report names.
#pragma once

#include <string_view>

#include "clef/decision.hpp"

namespace clef::detail {

/// True when `reported` names `asked`: the same name in any case; a tag the ask left out or
/// gave as "latest" (clef-flash ↔ clef-flash:latest, laya → laya:en); Workers AI's bare name
/// for @cf/ORG/NAME (and any registry or namespace path before the name); a version of a
/// family alias (jev-latest → jev-1.13.0, jev-preview → jev-1.14.0, jev → jev-1.13.0). An empty
/// `reported` or `asked` says nothing, and is taken. With `tags_name_models` (Ollama, whose tags
/// are models: clef-flash:q4 is not clef-flash), a name without a tag is name:latest and tags
/// must be equal.
bool same_model(std::string_view asked, std::string_view reported, bool tags_name_models = false);

/// Marks every answer of `decision` invalid, naming both models, when the server says another
/// model than `asked` answered: scoring such answers as the asked model's would be wrong.
void mark_other_model(Decision& decision, std::string_view asked, bool tags_name_models);

}  // namespace clef::detail
