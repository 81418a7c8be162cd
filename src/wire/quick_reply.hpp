// Internal: the common System One reply read straight from its text, with no JSON tree — a
// decision's largest cost on the client once its bytes are in (a batch of small answers spent an
// eighth of its time building and walking the tree). It reads only what it can vouch for and
// answers nothing otherwise; wire_response.cpp's reader then reads the reply and explains it.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "clef/decision.hpp"
#include "clef/options.hpp"
#include "clef/question.hpp"

namespace clef::detail {

/// The decision parse_decision reads from `text` (raw_json set; request_id not), or nullopt
/// when `text` holds anything this reader leaves to parse_decision: any doubt about the JSON
/// (see json_cursor.hpp), a member it reads sent twice, a usage member other than the token
/// counts, an answer of another type, a refusal, a box, probabilities not one per option each
/// in [0, 1], a "choice" that is not a string, more than 64 questions or options. Whenever it
/// answers, its decision is the one parse_decision reads (tests/quick_reply_test.cpp and
/// tests/fuzz/fuzz_quick_reply.cpp compare the two).
std::optional<Decision> read_quick_reply(std::string_view text,
                                         const std::vector<Question>& questions,
                                         const ValidationOptions& validation);

}  // namespace clef::detail
