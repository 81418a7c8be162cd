// Internal: DecisionRequest -> the exact wire JSON one backend expects.
#pragma once

#include <string>

#include "clef/backend.hpp"
#include "clef/request.hpp"

namespace clef::detail {

/// Validates `request` (questions, images, fields) for `backend` and writes the compact body.
/// `model` is the name that goes into the body (already bare for Workers AI).
Result<std::string> serialize_request(const DecisionRequest& request, Backend backend,
                                      const std::string& model);

}  // namespace clef::detail
