// Questions from the command line: wire-format files, or inline shorthand.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "clef/question.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// The questions of each file, in the wire format (clef::parse_questions), one file after the
/// other ("-" is `in`). Errors name the file, then the question, field and byte.
Result<std::vector<Question>> read_questions_files(const std::vector<std::string>& paths,
                                                   std::istream& in);

/// Inline shorthand, one question per flag value ('|' separates parts, '\|' is a literal '|'):
///   --choice  'team: Which team? | billing=Payments and refunds | technical | other=None'
///   --yes-no  'refund: Does the customer ask for a refund? | true=Asks for money back | false=...'
///   --score   'urgency: How urgent is this ticket? | Routine | Soon | Urgent'
Result<Question> parse_shorthand(QuestionType type, const std::string& spec);

}  // namespace clef::cli
