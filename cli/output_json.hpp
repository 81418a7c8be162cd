// The JSON clef prints: the schema of --json, of every clef batch line, and of an error.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "clef/decision.hpp"
#include "clef/error.hpp"

namespace clef::cli {

/// {"model", "usage", "request_id", "answers": {name: {type, status, winner, probability,
/// confidence, probabilities, ...}}} — what --json prints and each batch line carries.
nlohmann::ordered_json decision_json(const Decision& decision);
/// True when every answer is ok or abstained (valid, below a --policy threshold): nothing to
/// redo.
bool all_answered(const Decision& decision);
/// One answer as in decision_json; an abstained one keeps its winner and adds "threshold".
nlohmann::ordered_json answer_json(const Answer& answer);
/// {"kind", "status", "message", "server_message", "server_code", "request_id", "where"}.
nlohmann::ordered_json error_json(const Error& error);

}  // namespace clef::cli
