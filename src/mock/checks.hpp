// Internal: the checks each imitated server makes on a decision request — its token and its
// body, read as hostile input: no accessor that throws on a value of an unexpected type.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "clef/mock.hpp"

namespace clef::mock_detail {

using Json = nlohmann::ordered_json;

/// Whether an `Authorization` header value lets a request through Workers AI's token check:
/// "Bearer " and `token` when one is required, else "Bearer " and any token that is not blank.
bool authorized(const std::string& authorization, const std::optional<std::string>& token);

/// Member `key` of object `object`, or nullptr (never a throwing accessor on hostile JSON).
const Json* member(const Json& object, const std::string& key);

/// The checks the servers make on a decision body: the first problem found, or "".
std::string check_body(MockProfile shape, const Json& body);

}  // namespace clef::mock_detail
