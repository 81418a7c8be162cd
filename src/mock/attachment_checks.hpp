// Internal: the imitated servers' checks on a request's images, audio and videos, as their
// published schemas state them (Workers AI's clef-flash and clef-omni, Ollama's raw base64).
#pragma once

#include <string>

#include "mock/checks.hpp"

namespace clef::mock_detail {

/// The first problem with the body's attachments, or "".
std::string check_attachments(MockProfile shape, const Json& body);

}  // namespace clef::mock_detail
