// Internal: questions to and from their wire form, the `questions` object of a request.
// The reader is public (clef::parse_questions in <clef/question.hpp>); both directions live in
// question_wire.cpp so a protocol change is made once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clef/question.hpp"
#include "clef/result.hpp"

namespace clef::detail {

/// Appends `{"name": {...}, ...}` for already validated questions, in their order. Fails only on
/// text that is not valid UTF-8, naming the field.
Status append_questions(std::string& out, const std::vector<Question>& questions);

/// What validate() says of a request of `count` questions by their count alone: none, or more
/// than QuestionLimits::max_questions, is refused. (A file's questions are counted before any
/// is read.)
Status check_question_count(std::size_t count);

/// Whether two question sets are the same, field for field (what the wire would carry).
bool same_questions(const std::vector<Question>& a, const std::vector<Question>& b);

/// A question set validated and written in its wire form once.
struct PreparedQuestions {
  std::vector<Question> questions;
  std::string wire_json;  ///< The `questions` object as append_questions writes it.
};

/// The question set last prepared, kept for the requests that repeat it: a batch, or a program
/// asking the same questions of every item, validates and writes them once rather than per
/// request. One entry: comparing a set costs a fraction of preparing it, a lookup among many
/// would not. Safe to call from any thread.
class QuestionMemo {
 public:
  Result<std::shared_ptr<const PreparedQuestions>> prepare(
      const std::vector<Question>& questions) const;

 private:
  mutable std::mutex m_mutex;
  mutable std::shared_ptr<const PreparedQuestions> m_last;
};

}  // namespace clef::detail
