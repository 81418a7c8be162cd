// Internal: a decision's cost from its response — the server's measured figure (Workers AI's
// cf-ai-neurons header, then usage.neurons or usage.cost in the body), else its token counts ×
// the price that applies (clef/cost.hpp's table or the client's overrides), else unknown.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "clef/cost.hpp"
#include "clef/decision.hpp"
#include "clef/transport.hpp"
#include "util/json_text.hpp"

namespace clef::detail {

/// The body's measured figure, from its "usage" object: neurons (Workers AI), else cost in
/// dollars (OpenRouter-style servers). Leaves `cost` unknown when neither is a plausible number.
void read_body_cost(const Json& usage, Cost& cost);

/// `decision`'s token counts at the price that applies to `model` (the table, or `overrides`),
/// computed; unknown when no price applies.
Cost token_cost(const Decision& decision, Backend backend, std::string_view model,
                const std::map<std::string, Price>& overrides);

/// Workers AI's cf-ai-neurons header as a cost (what the server measured), or nullopt.
std::optional<Cost> cf_ai_neurons_cost(const HttpResponse& response);

/// decision.cost, in clef's order of trust: a cache hit spent nothing; Workers AI's header; the
/// body's figure (read_body_cost, already in decision.cost); tokens × price; else unknown.
void settle_cost(Decision& decision, Backend backend, const HttpResponse& response,
                 std::string_view model, const std::map<std::string, Price>& overrides);

}  // namespace clef::detail
