// --price MODEL=INPUT[,OUTPUT]: a model's price in dollars per million tokens, for decisions whose
// server measures nothing (clef/cost.hpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/cost.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// A plain decimal amount of dollars from 0 to `most` ("0.09", "1e-3"): nothing strtod would
/// skip or round away (white space, hex, "nan", an underflow to 0); nullopt for anything else.
std::optional<double> dollars_from_text(std::string_view text, double most);

/// Each value "MODEL=INPUT[,OUTPUT]" (OUTPUT 0 when left out) into the client's price overrides;
/// the error names the value and what is wrong with it.
Result<std::map<std::string, Price>> parse_prices(const std::vector<std::string>& values);

/// A price file (--prices FILE): one MODEL=INPUT[,OUTPUT] a line, as --price takes it; blank
/// lines and lines starting with '#' are skipped. The error names the file and line.
Result<std::map<std::string, Price>> parse_price_file(std::string_view text,
                                                      const std::string& path);

}  // namespace clef::cli
