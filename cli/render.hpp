// How decisions and errors are printed: for people, and for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "clef/decision.hpp"
#include "clef/error.hpp"

namespace clef::cli {

/// {"model", "usage", "request_id", "answers": {name: {type, status, winner, probability,
/// confidence, probabilities, ...}}} — what --json prints and each batch line carries.
nlohmann::ordered_json decision_json(const Decision& decision);
/// One answer as in decision_json.
nlohmann::ordered_json answer_json(const Answer& answer);
/// {"kind", "status", "message", "server_message", "server_code", "request_id", "where"}.
nlohmann::ordered_json error_json(const Error& error);

/// Per question: the winner and its probability, then a bar per option, most likely first.
void print_human(std::ostream& out, const Decision& decision,
                 const std::vector<Question>& questions, bool color);
/// One JSON object per question, one per line.
void print_jsonl(std::ostream& out, const Decision& decision);
/// question, type, winner, probability, confidence, status — tab-separated with a header.
void print_tsv(std::ostream& out, const Decision& decision);
/// Only the winning labels, one per question, in question order.
void print_values(std::ostream& out, const Decision& decision);

/// Dumps JSON with invalid UTF-8 replaced rather than throwing.
std::string dump(const nlohmann::ordered_json& value);

}  // namespace clef::cli
