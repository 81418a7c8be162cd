// The implementation of clef/decision.hpp: the typed answers a decision model returns.
#include "clef/decision.hpp"

#include <algorithm>

#include "model/box_answer.hpp"

namespace clef {

const char* to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::yes:
      return "yes";
    case Verdict::no:
      return "no";
    case Verdict::unknown:
      return "unknown";
  }
  return "unknown";
}

const char* to_string(AnswerStatus status) noexcept {
  switch (status) {
    case AnswerStatus::ok:
      return "ok";
    case AnswerStatus::missing:
      return "missing";
    case AnswerStatus::refused:
      return "refused";
    case AnswerStatus::wrong_type:
      return "wrong_type";
    case AnswerStatus::invalid:
      return "invalid";
    case AnswerStatus::abstained:
      return "abstained";
  }
  return "invalid";
}

double intersection_over_union(const BoxAnswer& a, const BoxAnswer& b) noexcept {
  const double across = std::min(a.right, b.right) - std::max(a.left, b.left);
  const double down = std::min(a.bottom, b.bottom) - std::max(a.top, b.top);
  if (!(across > 0) || !(down > 0)) return 0;
  // In units of the larger width and height: two tiny boxes (edges 1e-200 apart) have areas
  // that underflow to 0 in absolute terms, but overlap exactly as much as large ones.
  const double unit_x = std::max(a.width(), b.width());
  const double unit_y = std::max(a.height(), b.height());
  const double shared = (across / unit_x) * (down / unit_y);
  const double either = (a.width() / unit_x) * (a.height() / unit_y) +
                        (b.width() / unit_x) * (b.height() / unit_y) - shared;
  return either > 0 ? std::min(1.0, shared / either) : 0;
}

std::string Answer::winner() const {
  if (auto* c = choice()) return c->choice;
  if (auto* n = yes_no()) return to_string(n->verdict);
  if (auto* s = score()) return s->most_likely_label;
  if (auto* b = box()) return detail::box_text(*b);
  return {};
}

double Answer::winner_probability() const noexcept {
  if (auto* c = choice()) return c->probability;
  if (auto* n = yes_no()) {
    switch (n->verdict) {
      case Verdict::yes:
        return n->p_true;
      case Verdict::no:
        return 1.0 - n->p_true;
      case Verdict::unknown:
        return std::max(n->p_true, 1.0 - n->p_true);
    }
  }
  if (auto* s = score()) {
    // A ScoreAnswer made by hand may name a level it has no probability for: 0, not a crash.
    const auto level = static_cast<std::size_t>(s->most_likely_level);
    return s->most_likely_level >= 0 && level < s->probabilities.size() ? s->probabilities[level]
                                                                        : 0.0;
  }
  if (auto* b = box()) return b->confidence;
  return 0;
}

double Answer::confidence() const noexcept {
  if (auto* c = choice()) return c->confidence;
  if (auto* n = yes_no()) return n->confidence;
  if (auto* s = score()) return s->confidence;
  if (auto* b = box()) return b->confidence;
  return 0;
}

const Answer* Decision::answer(std::string_view question) const noexcept {
  for (const auto& a : answers) {
    if (a.question == question) return &a;
  }
  return nullptr;
}

bool Decision::all_ok() const noexcept {
  return std::all_of(answers.begin(), answers.end(), [](const Answer& a) { return a.ok(); });
}

}  // namespace clef
