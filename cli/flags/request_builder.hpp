// Turning validated command-line input into a request.
#pragma once

#include <string>
#include <vector>

#include "clef/request.hpp"

namespace clef::cli {

/// The files --image, --audio and --video named, in the order given.
struct AttachmentPaths {
  std::vector<std::string> images;
  std::vector<std::string> audio;
  std::vector<std::string> videos;
};

/// A request from a state, questions, attachments and a --keep-alive value ("" = none). Each
/// file is recognised by its bytes; the model's limits are checked when the request is sent.
Result<DecisionRequest> build_request(State state, const std::vector<Question>& questions,
                                      const AttachmentPaths& attachments,
                                      const std::string& keep_alive);

}  // namespace clef::cli
