// Internal: an answer's checks once its fields are read — the distribution, the winner, the
// verdict — shared by the two readers of a reply: wire_response.cpp's, over a parsed JSON value,
// and quick_reply.cpp's, over the reply's text. What each reader takes out of the JSON is its
// own; what the fields then mean is decided here, once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/decision.hpp"
#include "clef/options.hpp"
#include "clef/question.hpp"

namespace clef::detail {

/// Sets `answer`'s status and problem and drops any value.
void mark(Answer& answer, AnswerStatus status, std::string problem);

/// The answer to `q` before its object is read: the question and the type asked.
Answer answer_for(const Question& q);

/// The answer to `q` when the reply sent none (no member for it, or null).
Answer unanswered(const Question& q);

/// Whether `p` is a probability: finite, in [0, 1].
bool is_probability(double p);

/// A choice answer's "choice" member as sent.
struct SentChoice {
  enum class Form { absent, text, not_text };
  Form form = Form::absent;
  std::string_view text;  ///< The label, when form is text.
};

/// A choice answer from its probabilities (one per option, in the question's order, each
/// already in [0, 1]), its "choice" and its "confidence": the sum checked (rounded sums rescaled),
/// the server's choice checked against the most likely option.
void finish_choice(std::vector<double> p, SentChoice sent, std::optional<double> server_confidence,
                   const Question& q, const ValidationOptions& v, Answer& a);

/// A yes/no answer from its "noul" (P(true); nullopt when missing or not a number).
void finish_yes_no(std::optional<double> noul, const ValidationOptions& v, Answer& a);

/// A score answer from its probabilities (one per level, lowest first, each already in [0, 1]),
/// its "score" and its "confidence".
void finish_score(std::vector<double> p, std::optional<double> sent_score,
                  std::optional<double> server_confidence, const Question& q,
                  const ValidationOptions& v, Answer& a);

}  // namespace clef::detail
