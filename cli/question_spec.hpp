// Questions from the command line: a wire-format file, or inline shorthand.
#pragma once

#include <string>
#include <vector>

#include "clef/question.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// Reads a questions object exactly in the wire format:
///   {"team": {"type": "choice", "instructions": "...", "criteria": {"billing": "...", ...}}, ...}
/// Key order is kept. Unknown fields are refused (never silently dropped); errors name the file,
/// the question and the field, or the byte offset of a JSON syntax error.
Result<std::vector<Question>> parse_questions_json(const std::string& json_text,
                                                   const std::string& source);
Result<std::vector<Question>> read_questions_file(const std::string& path);

/// Inline shorthand, one question per flag value ('|' separates parts, '\|' is a literal '|'):
///   --choice  'team: Which team? | billing=Payments and refunds | technical | other=None'
///   --yes-no  'refund: Does the customer ask for a refund? | true=Asks for money back | false=...'
///   --score   'urgency: How urgent is this ticket? | Routine | Soon | Urgent'
Result<Question> parse_shorthand(QuestionType type, const std::string& spec);

}  // namespace clef::cli
