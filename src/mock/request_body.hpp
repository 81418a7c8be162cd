// Internal: a decision request's body, read once as hostile input — its size against the
// profile's cap, its JSON within the depth bound, and the parts the rules and the model read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "clef/mock.hpp"

namespace clef::mock_detail {

using Json = nlohmann::ordered_json;

/// The largest request body read at all; larger ones get 413 before they are read whole.
inline constexpr std::size_t max_body_bytes = 64u * 1024u * 1024u;

/// The request body as JSON, or nullopt and why not: not JSON, or nested deeper than
/// max_json_depth (the client's own bound), which a linear scan finds before any parse.
std::optional<Json> parse_body(std::string_view text, std::string& problem);

/// A request body, read once: the JSON (when it is JSON within the depth bound) and the parts
/// the rules and the default model read. A body over the profile's size cap is not read.
struct Decoded {
  bool too_large = false;
  std::optional<Json> body;
  std::string problem;  ///< why `body` is empty
  std::string model;
  std::string state_json;  ///< the state as JSON text (the default model's input)
  std::string state_text;  ///< what rules match: a string state's text, else state_json
};

/// `text` read as `shape` reads a decision body. Over Ollama's 64 KiB cap for a body without
/// images (found by a scan of its top-level members) it is marked too_large and not parsed.
Decoded decode(MockProfile shape, const std::string& text);

}  // namespace clef::mock_detail
