// clef: a Decision and an Error in clef's own JSON — what `clef ask --json` prints and each
// `clef batch` line holds — and read back from it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clef/decision.hpp"
#include "clef/error.hpp"
#include "clef/export.hpp"
#include "clef/question.hpp"

namespace clef {

/// {"type", "status", ...}: the winner, its probability, clef's confidence and the
/// probabilities by label (choice), P(true) (yes/no) or level (score); "problem" instead when
/// there is no value; "threshold" for an abstained answer; "renormalized" when it was.
CLEF_API nlohmann::ordered_json to_json(const Answer& answer);

/// {"model", "usage", "request_id", "answers": {question: answer}, "cached" when it was, "host"
/// when run_batch had several hosts}. The raw response and the latency are not part of it (a batch
/// line adds "latency_ms" itself). With <nlohmann/json.hpp>: `std::string line =
/// clef::dump_json(clef::to_json(decision));`
CLEF_API nlohmann::ordered_json to_json(const Decision& decision);

/// The members of to_json(decision), written as dump_json writes them but without the braces
/// (`"model":…,"cost":{…}`) and without building the JSON value: for a program that writes a
/// line per decision with members of its own around them, as clef batch adds "id" and
/// "latency_ms". Byte for byte what dump_json(to_json(decision)) holds between its braces.
CLEF_API void append_json_members(std::string& out, const Decision& decision);

/// {"kind", "status", "message", and "server_message", "server_code", "request_id", "where",
/// "host" when known}. The proxy and Retry-After are not part of it.
CLEF_API nlohmann::ordered_json to_json(const Error& error);
/// {"usd": dollars or null when unknown, "source": "header"|"body"|"computed"|"cached"|"unknown"}
/// and "neurons" when the server measured them.
CLEF_API nlohmann::ordered_json to_json(const Cost& cost);
/// The Cost `json` holds; unknown for anything that is not one (a negative or missing amount,
/// a source clef does not know). Never throws.
CLEF_API Cost cost_from_json(const nlohmann::ordered_json& json);

/// The Decision `json` holds (as to_json wrote it), one answer per question in `questions`'
/// order, so to_json(decision_from_json(to_json(d), questions)) is to_json(d). Read as hostile
/// input: never throws; a question without an answer is AnswerStatus::missing, and an answer
/// that does not fit its question (another type, probabilities missing or outside [0, 1]) is
/// AnswerStatus::invalid with the reason in `problem`.
CLEF_API Decision decision_from_json(const nlohmann::ordered_json& json,
                                     const std::vector<Question>& questions);

/// The Error `json` holds (as to_json wrote it). Never throws: a kind clef does not know reads
/// as invalid_response, a missing message as "failed".
CLEF_API Error error_from_json(const nlohmann::ordered_json& json);

}  // namespace clef
