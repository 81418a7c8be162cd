// Turning validated command-line input into a request.
#pragma once

#include <string>
#include <vector>

#include "clef/request.hpp"

namespace clef::cli {

/// A request from a state, questions, image paths and a --keep-alive value ("" = none).
Result<DecisionRequest> build_request(State state, const std::vector<Question>& questions,
                                      const std::vector<std::string>& image_paths,
                                      const std::string& keep_alive);

}  // namespace clef::cli
