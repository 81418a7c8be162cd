// The implementation of clef/eval.hpp: how well a model answers one question on labelled items —
// the typed report behind `clef eval`, for applications that gate themselves.
#include "clef/eval.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "clef/digest.hpp"
#include "model/box_answer.hpp"
#include "util/ascii.hpp"

namespace clef {
namespace {

std::string trimmed(std::string_view text) {
  return std::string(detail::trimmed_space(text));
}

Error not_a_gold(const Question& question, const std::string& written, std::string valid) {
  return make_error(ErrorKind::invalid_input,
                    "\"" + written + "\" is not an answer of " + question.name + " (" + valid + ")",
                    "gold." + question.name);
}

/// What one answered item contributes: the prediction and the per-item scores.
struct Scored {
  std::string predicted;
  double winner_probability = 0;
  double brier = 0;
  double log_loss = 0;
  std::optional<double> p_true;  ///< yes/no
  std::optional<double> absolute_error, rps;
  std::optional<bool> within_1;  ///< score
  std::optional<double> iou;     ///< box: with the gold box
};

/// A box is right when it overlaps the gold box by half (IoU ≥ 0.5, the usual detection bar);
/// any other answer when its winner is the gold label.
bool is_right(const Scored& s, const std::string& gold) {
  return s.iou ? *s.iou >= 0.5 : s.predicted == gold;
}

std::size_t index_of(const std::vector<std::string>& labels, const std::string& label) {
  return static_cast<std::size_t>(std::find(labels.begin(), labels.end(), label) - labels.begin());
}

Scored score_choice(const ChoiceAnswer& c, const std::string& gold) {
  Scored s;
  s.predicted = c.choice;
  s.winner_probability = c.probability;
  std::vector<double> p;
  std::size_t gold_index = c.probabilities.size();
  for (std::size_t i = 0; i < c.probabilities.size(); ++i) {
    p.push_back(c.probabilities[i].probability);
    if (c.probabilities[i].label == gold) gold_index = i;
  }
  s.brier = metrics::brier(p, gold_index);
  s.log_loss = metrics::log_loss(gold_index < p.size() ? p[gold_index] : 0.0);
  return s;
}

Scored score_yes_no(const YesNoAnswer& n, const std::string& gold) {
  Scored s;
  const bool yes = n.p_true >= 0.5;
  s.predicted = yes ? "yes" : "no";
  s.winner_probability = yes ? n.p_true : 1.0 - n.p_true;
  s.brier = metrics::brier_binary(n.p_true, gold == "yes");
  s.log_loss = metrics::log_loss(gold == "yes" ? n.p_true : 1.0 - n.p_true);
  s.p_true = n.p_true;
  return s;
}

Scored score_level(const ScoreAnswer& a, const Question& q, const std::string& gold) {
  Scored s;
  const std::size_t gold_index = index_of(q.levels, gold);
  const auto level = static_cast<std::size_t>(a.most_likely_level);
  s.predicted = a.most_likely_label;
  s.winner_probability = level < a.probabilities.size() ? a.probabilities[level] : 0.0;
  s.brier = metrics::brier(a.probabilities, gold_index);
  s.log_loss =
      metrics::log_loss(gold_index < a.probabilities.size() ? a.probabilities[gold_index] : 0.0);
  double expected = 0;
  for (std::size_t i = 0; i < a.probabilities.size(); ++i) {
    expected += static_cast<double>(i) * a.probabilities[i];
  }
  s.absolute_error = std::fabs(expected - static_cast<double>(gold_index));
  s.within_1 = (level > gold_index ? level - gold_index : gold_index - level) <= 1;
  s.rps = metrics::ranked_probability_score(a.probabilities, gold_index);
  return s;
}

Scored score_box(const BoxAnswer& b, const std::string& gold) {
  Scored s;
  s.predicted = detail::box_text(b);
  s.winner_probability = b.confidence;
  std::string problem;
  const auto gold_box = detail::parse_box_text(gold, problem);  // gold_label wrote it
  s.iou = gold_box ? intersection_over_union(b, *gold_box) : 0.0;
  return s;
}

std::optional<Scored> score(const Question& q, const Answer* answer, const std::string& gold) {
  if (!answer || !answer->ok()) return std::nullopt;
  if (const auto* c = answer->choice()) return score_choice(*c, gold);
  if (const auto* n = answer->yes_no()) return score_yes_no(*n, gold);
  if (const auto* s = answer->score()) return score_level(*s, q, gold);
  if (const auto* b = answer->box()) return score_box(*b, gold);
  return std::nullopt;
}

/// Per-item values gathered over the answered items.
struct Collected {
  std::size_t correct = 0;
  std::vector<double> brier, log_loss, confidence, p_true, absolute_error, rps;
  std::vector<bool> right, gold_yes;
  std::size_t within_1 = 0;
  std::vector<double> iou;
};

void collect(Collected& all, const Scored& s, const std::string& gold) {
  const bool right = is_right(s, gold);
  all.correct += right ? 1 : 0;
  all.right.push_back(right);
  all.confidence.push_back(s.winner_probability);
  if (s.iou) {
    all.iou.push_back(*s.iou);
    return;  // a box has no probabilities to score
  }
  all.brier.push_back(s.brier);
  all.log_loss.push_back(s.log_loss);
  if (s.p_true) {
    all.p_true.push_back(*s.p_true);
    all.gold_yes.push_back(gold == "yes");
  }
  if (s.absolute_error) all.absolute_error.push_back(*s.absolute_error);
  if (s.rps) all.rps.push_back(*s.rps);
  if (s.within_1 && *s.within_1) ++all.within_1;
}

}  // namespace

Result<std::string> gold_label(const Question& question, std::string_view written) {
  const std::string text = trimmed(written);
  if (text.empty()) return std::string();
  switch (question.type) {
    case QuestionType::choice: {
      std::string valid;
      for (const auto& option : question.options) {
        if (option.label == text) return text;
        valid += (valid.empty() ? "" : ", ") + option.label;
      }
      return not_a_gold(question, text, valid);
    }
    case QuestionType::yes_no: {
      const std::string word = detail::ascii_lower(text);
      if (word == "true" || word == "yes" || word == "1") return std::string("yes");
      if (word == "false" || word == "no" || word == "0") return std::string("no");
      return not_a_gold(question, text, "true/false, yes/no or 1/0");
    }
    case QuestionType::score: {
      const std::size_t at = index_of(question.levels, text);
      if (at < question.levels.size()) return question.levels[at];
      if (text.size() <= 2 && text.find_first_not_of("0123456789") == std::string::npos) {
        const std::size_t index = std::stoul(text);
        if (index < question.levels.size()) return question.levels[index];
      }
      return not_a_gold(
          question, text,
          "a level's label, or its index 0 to " + std::to_string(question.levels.size() - 1));
    }
    case QuestionType::box: {
      std::string problem;
      if (auto box = detail::parse_box_text(text, problem)) return detail::box_text(*box);
      return not_a_gold(question, text, problem);
    }
  }
  return not_a_gold(question, text, "unknown question type");
}

QuestionEvaluation evaluate_question(const Question& question, const std::vector<std::string>& gold,
                                     const std::vector<const Answer*>& answers) {
  QuestionEvaluation out;
  out.question = question.name;
  out.type = question.type;
  Collected all;
  for (std::size_t i = 0; i < gold.size(); ++i) {
    if (gold[i].empty()) {
      ++out.skipped;
      continue;
    }
    ++out.n;
    const auto scored = score(question, i < answers.size() ? answers[i] : nullptr, gold[i]);
    // Boxes are measured by overlap: every box is its own label, so no confusion matrix.
    if (question.type != QuestionType::box) {
      out.confusion.add(gold[i], scored ? scored->predicted : std::string());
    }
    if (!scored) continue;
    ++out.answered;
    collect(all, *scored, gold[i]);
  }
  out.coverage = metrics::wilson(out.answered, out.n);
  out.accuracy = metrics::wilson(all.correct, out.n);
  out.accuracy_answered = metrics::wilson(all.correct, out.answered);
  out.classes = metrics::class_scores(out.confusion);
  out.macro_f1 = metrics::macro_f1(out.confusion);
  out.brier = metrics::bootstrap_mean(all.brier);
  out.log_loss = metrics::bootstrap_mean(all.log_loss);
  out.ece = metrics::expected_calibration_error(all.confidence, all.right, 15, &out.reliability);
  if (out.answered > 0) out.ece_noise_floor = 1.0 / std::sqrt(static_cast<double>(out.answered));
  if (question.type == QuestionType::yes_no) out.auroc = metrics::auroc(all.p_true, all.gold_yes);
  if (question.type == QuestionType::score) {
    out.mae = metrics::bootstrap_mean(all.absolute_error);
    out.within_1 = metrics::wilson(all.within_1, out.answered);
    out.rps = metrics::bootstrap_mean(all.rps);
  }
  if (question.type == QuestionType::box) {
    out.mean_iou = metrics::bootstrap_mean(all.iou);
    out.iou_at_least_half = out.accuracy_answered;  // right means IoU ≥ 0.5
  }
  return out;
}

ModelComparison compare_question(const Question& question, const std::vector<std::string>& gold,
                                 const std::vector<const Answer*>& answers_a,
                                 const std::vector<const Answer*>& answers_b) {
  ModelComparison out;
  std::vector<double> difference;
  std::size_t flips = 0;
  for (std::size_t i = 0; i < gold.size(); ++i) {
    if (gold[i].empty()) continue;
    ++out.n;
    const auto a = score(question, i < answers_a.size() ? answers_a[i] : nullptr, gold[i]);
    const auto b = score(question, i < answers_b.size() ? answers_b[i] : nullptr, gold[i]);
    const bool a_right = a && is_right(*a, gold[i]);
    const bool b_right = b && is_right(*b, gold[i]);
    out.only_a_right += a_right && !b_right ? 1 : 0;
    out.only_b_right += b_right && !a_right ? 1 : 0;
    difference.push_back((a_right ? 1.0 : 0.0) - (b_right ? 1.0 : 0.0));
    // Two boxes are never the same text: they flip when one overlaps the gold and one not.
    const bool flipped =
        question.type == QuestionType::box
            ? a_right != b_right
            : (a ? a->predicted : std::string()) != (b ? b->predicted : std::string());
    flips += flipped ? 1 : 0;
  }
  out.accuracy_difference = metrics::bootstrap_mean(difference);
  out.mcnemar_p = metrics::mcnemar_exact_p(out.only_a_right, out.only_b_right);
  out.flip_rate = metrics::wilson(flips, out.n);
  return out;
}

bool in_fit_half(std::string_view id) {
  const std::string hex = sha256_hex(id);
  const int first_byte = std::stoi(hex.substr(0, 2), nullptr, 16);
  return first_byte % 2 == 0;
}

namespace {

/// One answered item as threshold fitting sees it.
struct Trusted {
  double confidence = 0;
  bool right = false;
  bool fit = false;
};

/// a / b; undefined when b is 0.
std::optional<double> ratio(std::size_t a, std::size_t b) {
  if (b == 0) return std::nullopt;
  return static_cast<double>(a) / static_cast<double>(b);
}

/// Precision and coverage at `threshold` over the items of one half.
struct AtThreshold {
  std::size_t above = 0;
  std::size_t right = 0;
};

AtThreshold at(const std::vector<Trusted>& items, bool fit, double threshold) {
  AtThreshold out;
  for (const auto& item : items) {
    if (item.fit != fit || item.confidence < threshold) continue;
    ++out.above;
    out.right += item.right ? 1 : 0;
  }
  return out;
}

FittedThreshold fit_one(std::string label, const std::vector<Trusted>& items, std::size_t fit_n,
                        std::size_t check_n, double target) {
  FittedThreshold out;
  out.label = std::move(label);
  out.fit_n = fit_n;
  out.check_n = check_n;
  std::vector<double> candidates;
  for (const auto& item : items) {
    if (item.fit) candidates.push_back(item.confidence);
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (double t : candidates) {  // lowest first: the first that holds is the answer
    const AtThreshold fit = at(items, true, t);
    const auto bound = metrics::wilson_lower_bound(fit.right, fit.above);
    if (!bound || *bound < target) continue;
    const AtThreshold check = at(items, false, t);
    out.threshold = t;
    out.fit_precision = ratio(fit.right, fit.above);
    out.fit_lower_bound = bound;
    out.fit_coverage = ratio(fit.above, fit_n);
    out.check_precision = ratio(check.right, check.above);
    out.check_coverage = ratio(check.above, check_n);
    break;
  }
  return out;
}

}  // namespace

std::vector<FittedThreshold> fit_thresholds(const Question& question,
                                            const std::vector<std::string>& ids,
                                            const std::vector<std::string>& gold,
                                            const std::vector<const Answer*>& answers,
                                            double target_precision) {
  std::vector<std::string> labels = {""};
  if (question.type == QuestionType::choice) {
    for (const auto& option : question.options) labels.push_back(option.label);
  }
  std::vector<FittedThreshold> out;
  for (const auto& label : labels) {
    std::vector<Trusted> items;
    std::size_t fit_n = 0, check_n = 0;
    for (std::size_t i = 0; i < gold.size() && i < ids.size(); ++i) {
      if (gold[i].empty()) continue;
      const bool fit = in_fit_half(ids[i]);
      (fit ? fit_n : check_n) += 1;
      const auto scored = score(question, i < answers.size() ? answers[i] : nullptr, gold[i]);
      // Per label: the items predicted as that label, right when their gold is it too.
      if (!scored || (!label.empty() && scored->predicted != label)) continue;
      items.push_back({scored->winner_probability, scored->predicted == gold[i], fit});
    }
    out.push_back(fit_one(label, items, fit_n, check_n, target_precision));
  }
  return out;
}

}  // namespace clef
