// A `clef batch` output read back (clef eval's --from-results, and the lines --resume keeps):
// each id's Decision rebuilt against the questions, or the error the item got.
#pragma once

#include <atomic>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "clef/decision.hpp"
#include "clef/eval_report.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// Keyed by id_key (the id's compact JSON). When an id has several lines, one with a decision
/// wins over an error, and a later line over an earlier one. A `duplicate_of` line (--dedupe to
/// stdout) takes the result of the id it names.
using BatchResults = std::unordered_map<std::string, ItemResult>;

/// One result line: its id's key and what the item got. None for a line without a usable id
/// (an unreadable input line) and for a bare `duplicate_of` line, which has no result of its own.
/// An answer that does not fit its question (wrong type, probabilities missing or out of
/// [0, 1]) is kept as AnswerStatus::invalid.
std::optional<std::pair<std::string, ItemResult>> item_result_from_line(
    const nlohmann::ordered_json& line, const std::vector<Question>& questions);

/// Reads the JSONL at `path` ("-" = `in`); a wait on a pipe ends once `stop` is set. A line that is
/// not a JSON object with an id is an error naming the file and line; an interrupt (`stop`) is a
/// cancelled error, whatever the read had reached. `order`, when given, gets each line's id key
/// in the file's order (an id on several lines, as a resumed run writes its retries, each time).
Result<BatchResults> read_batch_results(const std::string& path,
                                        const std::vector<Question>& questions, std::istream& in,
                                        const std::atomic<bool>* stop,
                                        std::vector<std::string>* order = nullptr);

}  // namespace clef::cli
