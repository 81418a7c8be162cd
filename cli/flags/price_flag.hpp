// --price MODEL=INPUT[,OUTPUT]: a model's price in dollars per million tokens, for decisions whose
// server measures nothing (clef/cost.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "clef/cost.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// Each value "MODEL=INPUT[,OUTPUT]" (OUTPUT 0 when left out) into the client's price overrides;
/// the error names the value and what is wrong with it.
Result<std::map<std::string, Price>> parse_prices(const std::vector<std::string>& values);

}  // namespace clef::cli
