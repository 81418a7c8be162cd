// clef::gold_label and clef::evaluate_question on small fixtures worked out by hand (each
// expected value's arithmetic is in the comment beside it).
#include <gtest/gtest.h>

#include <cmath>

#include "clef/eval.hpp"

namespace {

using clef::Answer;
using clef::Question;

Answer ok_answer(const std::string& name, clef::QuestionType type) {
  Answer a;
  a.question = name;
  a.asked = type;
  a.status = clef::AnswerStatus::ok;
  return a;
}

Answer choice(const std::vector<std::pair<std::string, double>>& p) {
  Answer a = ok_answer("team", clef::QuestionType::choice);
  clef::ChoiceAnswer c;
  for (const auto& [label, probability] : p) {
    c.probabilities.push_back({label, probability});
    if (probability > c.probability) {
      c.probability = probability;
      c.choice = label;
    }
  }
  a.value = c;
  return a;
}

Answer noul(double p_true) {
  Answer a = ok_answer("refund", clef::QuestionType::yes_no);
  clef::YesNoAnswer n;
  n.p_true = p_true;
  a.value = n;
  return a;
}

Answer level(const std::vector<double>& p, const std::vector<std::string>& labels) {
  Answer a = ok_answer("urgency", clef::QuestionType::score);
  clef::ScoreAnswer s;
  s.probabilities = p;
  s.most_likely_level = static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin());
  s.most_likely_label = labels[static_cast<std::size_t>(s.most_likely_level)];
  s.labels = labels;
  a.value = s;
  return a;
}

const Question team = Question::choice(
    "team", "Which team?", {{"billing", "Money"}, {"technical", "Bugs"}, {"other", "Else"}});
const Question refund = Question::yes_no("refund", "Refund?");
const std::vector<std::string> scale = {"Routine", "Soon", "Urgent"};
const Question urgency = Question::score("urgency", "How urgent?", scale);

TEST(GoldLabel, ReadsWhatPeopleWrite) {
  EXPECT_EQ(clef::gold_label(refund, "Yes").value(), "yes");
  EXPECT_EQ(clef::gold_label(refund, " TRUE ").value(), "yes");
  EXPECT_EQ(clef::gold_label(refund, "0").value(), "no");
  EXPECT_EQ(clef::gold_label(refund, "").value(), "");
  EXPECT_FALSE(clef::gold_label(refund, "maybe").ok());
  EXPECT_EQ(clef::gold_label(urgency, "2").value(), "Urgent");
  EXPECT_EQ(clef::gold_label(urgency, "Soon").value(), "Soon");
  EXPECT_FALSE(clef::gold_label(urgency, "7").ok());
  EXPECT_EQ(clef::gold_label(team, "billing").value(), "billing");
  auto wrong = clef::gold_label(team, "Billing");  // labels are exact
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("billing, technical, other"), std::string::npos);
}

TEST(EvaluateQuestion, ChoiceByHand) {
  const Answer a1 = choice({{"billing", 0.8}, {"technical", 0.1}, {"other", 0.1}});
  const Answer a2 = choice({{"billing", 0.6}, {"technical", 0.3}, {"other", 0.1}});
  const Answer a5 = choice({{"billing", 0.2}, {"technical", 0.7}, {"other", 0.1}});
  // Item 3 has no answer, item 4 no gold.
  const auto e = clef::evaluate_question(team, {"billing", "technical", "other", "", "technical"},
                                         {&a1, &a2, nullptr, &a1, &a5});
  EXPECT_EQ(e.n, 4u);
  EXPECT_EQ(e.skipped, 1u);
  EXPECT_EQ(e.answered, 3u);
  EXPECT_DOUBLE_EQ(e.coverage->value, 0.75);
  EXPECT_DOUBLE_EQ(e.accuracy->value, 0.5);                 // 2 right of 4
  EXPECT_NEAR(e.accuracy_answered->value, 2.0 / 3, 1e-12);  // 2 of 3 answered
  EXPECT_EQ(e.confusion.count("other", ""), 1u);
  EXPECT_EQ(e.confusion.count("technical", "billing"), 1u);
  // billing: P 1/2, R 1/1, F1 2/3; technical: P 1/1, R 1/2, F1 2/3; other: 0 → macro 4/9.
  EXPECT_NEAR(*e.classes.at("billing").precision, 0.5, 1e-12);
  EXPECT_NEAR(*e.classes.at("technical").recall, 0.5, 1e-12);
  EXPECT_NEAR(*e.macro_f1, 4.0 / 9, 1e-12);
  // Brier: 0.2²+0.1²+0.1² = 0.06; 0.6²+0.7²+0.1² = 0.86; 0.2²+0.3²+0.1² = 0.14 → 1.06/3.
  EXPECT_NEAR(e.brier->value, 1.06 / 3, 1e-12);
  EXPECT_NEAR(e.log_loss->value, (-std::log(0.8) - std::log(0.3) - std::log(0.7)) / 3, 1e-12);
  // Each item alone in its bin: (|1 − 0.8| + |0 − 0.6| + |1 − 0.7|)/3.
  EXPECT_NEAR(*e.ece, 1.1 / 3, 1e-12);
  EXPECT_NEAR(*e.ece_noise_floor, 1 / std::sqrt(3.0), 1e-12);
  EXPECT_FALSE(e.auroc.has_value());
  EXPECT_FALSE(e.mae.has_value());
}

TEST(EvaluateQuestion, YesNoByHand) {
  const Answer a = noul(0.9), b = noul(0.4), c = noul(0.7), d = noul(0.2);
  const auto e = clef::evaluate_question(refund, {"yes", "yes", "no", "no"}, {&a, &b, &c, &d});
  EXPECT_DOUBLE_EQ(e.accuracy->value, 0.5);  // yes, no, yes, no predicted: items 1 and 4 right
  EXPECT_NEAR(e.brier->value, (0.01 + 0.36 + 0.49 + 0.04) / 4, 1e-12);
  // Pairs (positive, negative): 0.9>0.7, 0.9>0.2, 0.4<0.7, 0.4>0.2 → 3/4.
  ASSERT_TRUE(e.auroc.has_value());
  EXPECT_NEAR(*e.auroc, 0.75, 1e-12);
  EXPECT_NEAR(*e.classes.at("yes").precision, 0.5, 1e-12);  // predicted yes twice, right once
}

TEST(EvaluateQuestion, ScoreByHand) {
  const Answer a = level({0.1, 0.2, 0.7}, scale);  // gold Soon: predicted Urgent, wrong
  const Answer b = level({0.6, 0.3, 0.1}, scale);  // gold Routine: right
  const auto e = clef::evaluate_question(urgency, {"Soon", "Routine"}, {&a, &b});
  EXPECT_DOUBLE_EQ(e.accuracy->value, 0.5);
  // |1.6 − 1| = 0.6 and |0.5 − 0| = 0.5 → 0.55; both within one level.
  EXPECT_NEAR(e.mae->value, 0.55, 1e-12);
  EXPECT_DOUBLE_EQ(e.within_1->value, 1.0);
  // RPS: ((0.1)² + (0.3 − 1)²)/2 = 0.25 and ((0.6 − 1)² + (0.9 − 1)²)/2 = 0.085 → 0.1675.
  EXPECT_NEAR(e.rps->value, 0.1675, 1e-12);
}

TEST(EvaluateQuestion, AllRightAndAllWrong) {
  const Answer yes = noul(0.99);
  const auto right = clef::evaluate_question(refund, {"yes", "yes"}, {&yes, &yes});
  EXPECT_DOUBLE_EQ(right.accuracy->value, 1.0);
  EXPECT_DOUBLE_EQ(*right.macro_f1, 1.0);
  const auto wrong = clef::evaluate_question(refund, {"no", "no"}, {&yes, &yes});
  EXPECT_DOUBLE_EQ(wrong.accuracy->value, 0.0);
  EXPECT_DOUBLE_EQ(*wrong.macro_f1, 0.0);
}

TEST(EvaluateQuestion, NothingAnsweredLeavesTheAnsweredMetricsUndefined) {
  // Every request failed: the rates over n are 0, everything over answered items is undefined,
  // never the 0 (Brier, ECE) or 0.5 (AUROC) of a perfect or a coin-flip model.
  const auto none = clef::evaluate_question(refund, {"no", "yes"}, {nullptr, nullptr});
  EXPECT_EQ(none.n, 2u);
  EXPECT_EQ(none.answered, 0u);
  ASSERT_TRUE(none.accuracy && none.coverage);
  EXPECT_DOUBLE_EQ(none.accuracy->value, 0.0);
  EXPECT_DOUBLE_EQ(none.coverage->value, 0.0);
  EXPECT_FALSE(none.accuracy_answered);
  EXPECT_FALSE(none.brier);
  EXPECT_FALSE(none.log_loss);
  EXPECT_FALSE(none.ece);
  EXPECT_FALSE(none.ece_noise_floor);
  EXPECT_FALSE(none.auroc);
  ASSERT_EQ(none.reliability.size(), 15u);
  EXPECT_FALSE(none.reliability[0].accuracy);
  // Both labels are gold and never predicted: F1 0 (scikit-learn), precision undefined.
  EXPECT_DOUBLE_EQ(*none.macro_f1, 0.0);
  EXPECT_FALSE(none.classes.at("yes").precision);
  EXPECT_DOUBLE_EQ(*none.classes.at("yes").recall, 0.0);
  const auto levels = clef::evaluate_question(urgency, {"Soon"}, {nullptr});
  EXPECT_FALSE(levels.mae);
  EXPECT_FALSE(levels.within_1);
  EXPECT_FALSE(levels.rps);
  // No gold at all: not even accuracy.
  const auto no_gold = clef::evaluate_question(refund, {"", ""}, {nullptr, nullptr});
  EXPECT_EQ(no_gold.skipped, 2u);
  EXPECT_FALSE(no_gold.accuracy);
  EXPECT_FALSE(no_gold.coverage);
  EXPECT_FALSE(no_gold.macro_f1);
  // Answers with a gold of one class only: AUROC has no pair to rank.
  const Answer yes = noul(0.99);
  const auto one_class = clef::evaluate_question(refund, {"yes", "yes"}, {&yes, &yes});
  EXPECT_TRUE(one_class.brier);
  EXPECT_FALSE(one_class.auroc);
  const auto compared = clef::compare_question(refund, {"", ""}, {&yes, &yes}, {&yes, &yes});
  EXPECT_FALSE(compared.accuracy_difference);
  EXPECT_FALSE(compared.flip_rate);
}

TEST(CompareQuestion, PairedDifferenceMcNemarAndFlips) {
  const Answer a = noul(0.9), b = noul(0.1);
  const Answer sure_no = noul(0.2), unsure_no = noul(0.3);
  // Gold yes four times. A: right, right, right, wrong; B: right, wrong, wrong, wrong.
  const auto c = clef::compare_question(refund, {"yes", "yes", "yes", "yes"},
                                        {&a, &a, &a, &sure_no}, {&a, &b, &b, &unsure_no});
  EXPECT_EQ(c.n, 4u);
  EXPECT_EQ(c.only_a_right, 2u);
  EXPECT_EQ(c.only_b_right, 0u);
  EXPECT_NEAR(c.mcnemar_p, 0.5, 1e-12);                   // 2·P(X ≤ 0), X ~ Bin(2, ½) = 2·¼
  EXPECT_NEAR(c.accuracy_difference->value, 0.5, 1e-12);  // 3/4 − 1/4
  EXPECT_LE(c.accuracy_difference->low, 0.5);
  EXPECT_NEAR(c.flip_rate->value, 0.5, 1e-12);  // items 2 and 3 changed; item 4 is "no" for both
}

TEST(FitThresholds, HashSplitIsSha256) {
  // hashlib.sha256(id).hexdigest()[:2]: T1 1f, T2 0f, T5 02, a ca, b 3e.
  EXPECT_FALSE(clef::in_fit_half("T1"));
  EXPECT_FALSE(clef::in_fit_half("T2"));
  EXPECT_TRUE(clef::in_fit_half("T5"));
  EXPECT_TRUE(clef::in_fit_half("a"));
  EXPECT_TRUE(clef::in_fit_half("b"));
}

TEST(FitThresholds, LowestThresholdWhosePrecisionBoundMeetsTheTarget) {
  // Per half: 20 answers at 0.95, all right, and 10 at 0.6 of which half are right.
  std::vector<std::string> ids, gold;
  std::vector<const Answer*> answers;
  const Answer confident = noul(0.95), unsure = noul(0.6);
  std::size_t fit_confident = 0, fit_unsure = 0, check_confident = 0, check_unsure = 0;
  for (int i = 0; ids.size() < 120; ++i) {
    const std::string id = "item" + std::to_string(i);
    const bool fit = clef::in_fit_half(id);
    std::size_t& confident_count = fit ? fit_confident : check_confident;
    std::size_t& unsure_count = fit ? fit_unsure : check_unsure;
    if (confident_count < 20) {
      ++confident_count;
      ids.push_back(id), gold.push_back("yes"), answers.push_back(&confident);
    } else if (unsure_count < 10) {
      gold.push_back(unsure_count % 2 ? "yes" : "no");
      ++unsure_count;
      ids.push_back(id), answers.push_back(&unsure);
    }
    if (fit_unsure == 10 && check_unsure == 10 && fit_confident == 20 && check_confident == 20) {
      break;
    }
  }
  ASSERT_EQ(ids.size(), 60u);
  const auto fitted = clef::fit_thresholds(refund, ids, gold, answers, 0.8);
  ASSERT_EQ(fitted.size(), 1u);
  ASSERT_TRUE(fitted[0].threshold.has_value());
  // At 0.6: 25/30 right, Wilson lower bound ≈ 0.69 < 0.8. At 0.95: 20/20, bound 20/(20 + z²)
  // = 20/22.7055 = 0.8808 ≥ 0.8.
  EXPECT_DOUBLE_EQ(*fitted[0].threshold, 0.95);
  EXPECT_NEAR(*fitted[0].fit_lower_bound, 20.0 / (20.0 + 1.6448536269514722 * 1.6448536269514722),
              1e-9);
  EXPECT_NEAR(*fitted[0].fit_coverage, 20.0 / 30, 1e-12);
  EXPECT_NEAR(*fitted[0].check_coverage, 20.0 / 30, 1e-12);
  EXPECT_DOUBLE_EQ(*fitted[0].check_precision, 1.0);
  const auto none = clef::fit_thresholds(refund, ids, gold, answers, 0.95)[0];
  EXPECT_FALSE(none.threshold.has_value());
  EXPECT_FALSE(none.fit_precision || none.fit_coverage || none.check_precision);
}

}  // namespace
