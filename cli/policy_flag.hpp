// --policy FILE for ask and batch: the thresholds `clef eval --fit-thresholds` wrote.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "clef/policy.hpp"

namespace clef::cli {

/// The policy in `path` (none when `path` is empty), refused when it was fitted for other
/// questions or another model.
Result<std::optional<Policy>> load_policy(const std::string& path,
                                          const std::vector<Question>& questions,
                                          const std::string& model, std::istream& in);

}  // namespace clef::cli
