// Internal: the checks each imitated server makes on a decision body, read as hostile input:
// no accessor that throws on a value of an unexpected type.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "clef/mock.hpp"

namespace clef::mock_detail {

using Json = nlohmann::ordered_json;

/// The checks the servers make on a decision body: the first problem found, or "".
std::string check_body(MockProfile shape, const Json& body);

}  // namespace clef::mock_detail
