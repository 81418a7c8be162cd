// clef::compare_answers, compare_runs and their gates on small runs counted by hand, and
// jensen_shannon_divergence against SciPy's: each reference below is
//   /usr/bin/python3 -c "from scipy.spatial.distance import jensenshannon as js;
//                        print(repr(js(P, Q, base=2) ** 2))"
// (SciPy 1.10.1, Debian 12's python3-scipy; jensenshannon is the distance, the square root of
// the divergence).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "clef/drift.hpp"

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

/// A choice answer over billing, technical, other: `winner` at `p`, the rest shared equally.
Answer team_answer(const std::string& winner, double p) {
  Answer a = ok_answer("team", clef::QuestionType::choice);
  clef::ChoiceAnswer c;
  for (const char* label : {"billing", "technical", "other"})
    c.probabilities.push_back({label, label == winner ? p : (1 - p) / 2});
  c.choice = winner;
  c.probability = p;
  a.value = c;
  return a;
}

Answer refund_answer(double p_true) {
  Answer a = ok_answer("refund", clef::QuestionType::yes_no);
  clef::YesNoAnswer n;
  n.p_true = p_true;
  n.verdict = p_true >= 0.5 ? clef::Verdict::yes : clef::Verdict::no;
  a.value = n;
  return a;
}

const Question team = Question::choice(
    "team", "Which team?", {{"billing", "Money"}, {"technical", "Bugs"}, {"other", "Else"}});
const Question refund = Question::yes_no("refund", "Refund?");

std::vector<const Answer*> pointers(const std::vector<Answer>& answers) {
  std::vector<const Answer*> out;
  for (const auto& a : answers) out.push_back(&a);
  return out;
}

TEST(JensenShannon, MatchesSciPyOnCounts) {
  EXPECT_NEAR(clef::jensen_shannon_divergence({2, 2, 2}, {2, 3, 1}).value(), 0.032529960463599066,
              1e-15);
  EXPECT_NEAR(clef::jensen_shannon_divergence({8, 1, 1}, {5, 2, 3}).value(), 0.07519620693013067,
              1e-15);
  EXPECT_NEAR(clef::jensen_shannon_divergence({6, 2, 0, 2}, {4, 2, 4, 0}).value(),
              0.31452470277266564, 1e-15);
  EXPECT_DOUBLE_EQ(clef::jensen_shannon_divergence({3, 0}, {0, 3}).value(), 1.0);    // disjoint
  EXPECT_DOUBLE_EQ(clef::jensen_shannon_divergence({1, 2}, {10, 20}).value(), 0.0);  // same mix
}

TEST(JensenShannon, RefusesWhatIsNotADistribution) {
  EXPECT_FALSE(clef::jensen_shannon_divergence({1, 2}, {1, 2, 3}));
  EXPECT_FALSE(clef::jensen_shannon_divergence({0, 0}, {1, 1}));
  EXPECT_FALSE(clef::jensen_shannon_divergence({-1, 2}, {1, 1}));
  EXPECT_FALSE(clef::jensen_shannon_divergence({NAN, 1}, {1, 1}));
  EXPECT_FALSE(clef::jensen_shannon_divergence({INFINITY, 1}, {1, 1}));
  EXPECT_FALSE(clef::jensen_shannon_divergence({}, {}));
}

TEST(CompareAnswers, ChoiceCountedByHand) {
  // Items 1..6. A: billing billing technical technical other other.
  //            B: billing technical technical technical other billing.
  // Items 2 and 6 flip: 4 of 6 agree. Winner counts A {b 2, t 2, o 2}, B {b 2, t 3, o 1}.
  const std::vector<std::string> ids = {"\"1\"", "\"2\"", "\"3\"", "\"4\"", "\"5\"", "\"6\""};
  const std::vector<Answer> a = {team_answer("billing", 0.9),   team_answer("billing", 0.6),
                                 team_answer("technical", 0.8), team_answer("technical", 0.7),
                                 team_answer("other", 0.5),     team_answer("other", 0.9)};
  const std::vector<Answer> b = {team_answer("billing", 0.8),   team_answer("technical", 0.7),
                                 team_answer("technical", 0.8), team_answer("technical", 0.9),
                                 team_answer("other", 0.6),     team_answer("billing", 0.5)};
  const clef::QuestionDrift d = clef::compare_answers(team, ids, pointers(a), pointers(b));
  EXPECT_EQ(d.compared, 6u);
  EXPECT_EQ(d.only_a, 0u);
  ASSERT_TRUE(d.agreement);
  EXPECT_DOUBLE_EQ(d.agreement->value, 4.0 / 6);
  const auto wilson = clef::metrics::wilson(4, 6);
  EXPECT_DOUBLE_EQ(d.agreement->low, wilson->low);
  EXPECT_NEAR(d.js_divergence.value(), 0.032529960463599066, 1e-15);  // SciPy, as above
  // |p_B(w_A) − p_A(w_A)|, w_A = A's winner:
  //   1: 0.8 − 0.9 → 0.1; 2: B's billing (1 − 0.7)/2 = 0.15 vs 0.6 → 0.45; 3: 0; 4: 0.2;
  //   5: 0.1; 6: B's other (1 − 0.5)/2 = 0.25 vs 0.9 → 0.65. Mean 1.5 / 6 = 0.25.
  EXPECT_NEAR(d.mean_abs_delta_p.value(), 0.25, 1e-12);
  ASSERT_EQ(d.flips.size(), 2u);
  EXPECT_EQ(d.flips[0].id, "\"2\"");
  EXPECT_EQ(d.flips[0].winner_a, "billing");
  EXPECT_DOUBLE_EQ(d.flips[0].probability_a, 0.6);
  EXPECT_EQ(d.flips[0].winner_b, "technical");
  EXPECT_DOUBLE_EQ(d.flips[0].probability_b, 0.7);
  EXPECT_EQ(d.flips[1].id, "\"6\"");
  EXPECT_EQ(d.winners.at("technical").a, 2u);
  EXPECT_EQ(d.winners.at("technical").b, 3u);
  EXPECT_EQ(d.winners.at("other").b, 1u);
}

TEST(CompareAnswers, ItemsAnsweredInOneRunOnlyAreCountedApart) {
  const std::vector<std::string> ids = {"1", "2", "3", "4"};
  const Answer yes = refund_answer(0.9), no = refund_answer(0.2), yes_b = refund_answer(0.7);
  Answer refused = ok_answer("refund", clef::QuestionType::yes_no);
  refused.status = clef::AnswerStatus::refused;  // no value: not an answer
  const std::vector<const Answer*> a = {&yes, &no, nullptr, &yes};
  const std::vector<const Answer*> b = {&yes_b, &refused, &no, &yes};
  const clef::QuestionDrift d = clef::compare_answers(refund, ids, a, b);
  EXPECT_EQ(d.compared, 2u);  // items 1 and 4
  EXPECT_EQ(d.only_a, 1u);    // item 2: B refused
  EXPECT_EQ(d.only_b, 1u);    // item 3
  EXPECT_DOUBLE_EQ(d.agreement->value, 1.0);
  EXPECT_DOUBLE_EQ(d.js_divergence.value(), 0.0);
  // P(true): |0.7 − 0.9| and 0: mean 0.1.
  EXPECT_NEAR(d.mean_abs_delta_p.value(), 0.1, 1e-12);
  EXPECT_TRUE(d.flips.empty());
}

TEST(CompareAnswers, NothingComparedIsUndefinedNotPerfect) {
  const clef::QuestionDrift d = clef::compare_answers(refund, {"1"}, {nullptr}, {nullptr});
  EXPECT_EQ(d.compared, 0u);
  EXPECT_FALSE(d.agreement);
  EXPECT_FALSE(d.js_divergence);
  EXPECT_FALSE(d.mean_abs_delta_p);
  const Question box = Question::box("logo", "The logo");
  EXPECT_EQ(clef::compare_answers(box, {"1"}, {nullptr}, {nullptr}).compared, 0u);
}

clef::Decision decision_of(std::vector<Answer> answers, const std::string& model) {
  clef::Decision d;
  d.model = model;
  d.answers = std::move(answers);
  return d;
}

TEST(CompareRuns, OverallAgreementNeedsEveryQuestionToAgree) {
  // Item 1 agrees on both; item 2 flips refund only; item 3 has no result in B.
  const std::vector<std::string> ids = {"1", "2", "3"};
  std::vector<std::optional<clef::Decision>> a = {
      decision_of({team_answer("billing", 0.9), refund_answer(0.9)}, "v1"),
      decision_of({team_answer("other", 0.9), refund_answer(0.9)}, "v1"),
      decision_of({team_answer("other", 0.9), refund_answer(0.1)}, "v1")};
  std::vector<std::optional<clef::Decision>> b = {
      decision_of({team_answer("billing", 0.8), refund_answer(0.8)}, "v2"),
      decision_of({team_answer("other", 0.9), refund_answer(0.3)}, "v2"), std::nullopt};
  const clef::RunDrift drift = clef::compare_runs({team, refund}, ids, a, b);
  EXPECT_EQ(drift.model_a, "v1");
  EXPECT_EQ(drift.model_b, "v2");
  EXPECT_EQ(drift.items_a, 3u);
  EXPECT_EQ(drift.items_b, 2u);
  EXPECT_EQ(drift.common, 2u);
  ASSERT_EQ(drift.questions.size(), 2u);
  EXPECT_DOUBLE_EQ(drift.questions[0].agreement->value, 1.0);
  EXPECT_DOUBLE_EQ(drift.questions[1].agreement->value, 0.5);
  ASSERT_TRUE(drift.agreement);
  EXPECT_DOUBLE_EQ(drift.agreement->value, 0.5);  // 1 of the 2 items compared everywhere

  auto gate = [&](const std::string& text) {
    return clef::failed_drift_requirements({clef::parse_requirement(text).value()}, drift);
  };
  EXPECT_TRUE(gate("team.agreement >= 0.95").value().empty());
  const auto failed = gate("refund.agreement >= 0.95").value();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0], "refund.agreement >= 0.95 (it is 0.5)");
  EXPECT_EQ(gate("overall.agreement >= 0.9").value().size(), 1u);
  // Wilson's interval for 2 of 2: (1 + z²/4 − z·√(z²/16)) / (1 + z²/2) = 1 / 2.9208 ≈ 0.342.
  EXPECT_EQ(gate("lower(team.agreement) >= 0.5").value().size(), 1u);
  EXPECT_EQ(gate("lower(team.agreement) >= 0.34").value().size(), 0u);
  EXPECT_EQ(gate("refund.flips <= 1").value().size(), 0u);
  EXPECT_EQ(gate("refund.js_divergence <= 0.5").value().size(), 0u);
  EXPECT_FALSE(gate("refund.accuracy >= 0.9").ok());  // not a comparison metric
  EXPECT_FALSE(gate("urgency.agreement >= 0.9").ok());
  EXPECT_FALSE(gate("lower(refund.js_divergence) <= 0.1").ok());
  EXPECT_FALSE(gate("team.agreement[billing] >= 0.1").ok());

  const nlohmann::json json = clef::to_json(drift);
  EXPECT_EQ(json["schema"], "clef-diff/1");
  EXPECT_EQ(json["questions"]["refund"]["flips"][0]["id"], 2);  // the id's JSON value
  EXPECT_EQ(json["questions"]["refund"]["flips"][0]["winner_a"], "yes");
  EXPECT_EQ(json["questions"]["refund"]["flips"][0]["winner_b"], "no");
  EXPECT_EQ(json["question_order"], nlohmann::json::array({"team", "refund"}));
}

}  // namespace
