// A `clef batch` output read back (clef eval's --answers and --from-results): each id's
// Decision rebuilt against the questions, or the error the item got.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "clef/decision.hpp"
#include "clef/result.hpp"

namespace clef::cli {

struct ResultRecord {
  std::optional<Decision> decision;  ///< None: the item failed (`error` says how).
  std::string error;                 ///< Its message.
  std::string error_kind;            ///< Its kind as the line names it ("not_found"), or "".
  double latency_ms = 0;
  bool sent = true;  ///< False for a --dedupe copy: no request of its own.
};

/// Keyed by id_key (the id's compact JSON). When an id has several lines, one with a decision
/// wins over an error, and a later line over an earlier one. A `duplicate_of` line (--dedupe to
/// stdout) takes the result of the id it names.
using BatchResults = std::unordered_map<std::string, ResultRecord>;

/// Reads the JSONL at `path` ("-" = `in`). A line that is not a JSON object with an id is an
/// error naming the file and line; an answer that does not fit its question (wrong type,
/// probabilities missing or out of [0, 1]) is kept as AnswerStatus::invalid.
Result<BatchResults> read_batch_results(const std::string& path,
                                        const std::vector<Question>& questions, std::istream& in);

}  // namespace clef::cli
