// Internal: what the mock reads from a request, read as hostile input: bounded depth before
// anything is built or walked, and no accessor that throws on a value of an unexpected type.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "clef/mock.hpp"

namespace clef::mock_detail {

using Json = nlohmann::ordered_json;

/// The request body as JSON, or nullopt and why not: not JSON, or nested deeper than
/// max_json_depth (the client's own bound), which a linear scan finds before any parse.
std::optional<Json> parse_body(std::string_view text, std::string& problem);

/// The checks the servers make on a decision body: the first problem found, or "".
std::string check_body(MockProfile shape, const Json& body);

/// Ollama's name for a model: a name without a tag is NAME:latest ("clef" → "clef:latest").
std::string ollama_name(const std::string& name);

}  // namespace clef::mock_detail
