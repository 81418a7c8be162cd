// --policy FILE for ask and batch: the thresholds `clef eval --fit-thresholds` wrote.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "clef/policy.hpp"
#include "common/context.hpp"

namespace clef::cli {

/// The policy in `path` (none when `path` is empty; "-" reads context.in), refused as
/// Policy::check refuses it. An asked question the policy has no threshold for is said on
/// context.err: its answers are never abstained.
Result<std::optional<Policy>> load_policy(const std::string& path,
                                          const std::vector<Question>& questions,
                                          const std::string& model, const Context& context);

}  // namespace clef::cli
