// Internal: questions to and from their wire form, the `questions` object of a request.
// The reader is public (clef::parse_questions in <clef/question.hpp>); both directions live in
// question_wire.cpp so a protocol change is made once.
#pragma once

#include <string>
#include <vector>

#include "clef/question.hpp"
#include "clef/result.hpp"

namespace clef::detail {

/// Appends `{"name": {...}, ...}` for already validated questions, in their order. Fails only on
/// text that is not valid UTF-8, naming the field.
Status append_questions(std::string& out, const std::vector<Question>& questions);

}  // namespace clef::detail
