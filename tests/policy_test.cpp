// clef::Policy: reading a policy file as hostile input, and what applying it does to answers.
#include <gtest/gtest.h>

#include "clef/policy.hpp"

namespace {

clef::Answer choice_answer(const std::string& winner, double p) {
  clef::Answer answer;
  answer.question = "team";
  answer.asked = clef::QuestionType::choice;
  answer.status = clef::AnswerStatus::ok;
  clef::ChoiceAnswer c;
  c.choice = winner;
  c.probability = p;
  c.probabilities = {{winner, p}, {"other", 1 - p}};
  answer.value = c;
  return answer;
}

clef::Answer yes_no_answer(double p_true) {
  clef::Answer answer;
  answer.question = "refund";
  answer.asked = clef::QuestionType::yes_no;
  answer.status = clef::AnswerStatus::ok;
  clef::YesNoAnswer n;
  n.p_true = p_true;
  n.verdict = p_true >= 0.5 ? clef::Verdict::yes : clef::Verdict::no;
  answer.value = n;
  return answer;
}

const char* const policy_text = R"({"schema": "clef-policy/1", "model": "m",
  "questions_sha256": "abc", "target_precision": 0.9,
  "questions": {"team": {"threshold": 0.8, "labels": {"billing": 0.6, "other": null}},
                "refund": {"threshold": 0.9}}})";

TEST(Policy, AppliesQuestionAndLabelThresholds) {
  auto policy = clef::Policy::parse(policy_text, "p.json");
  ASSERT_TRUE(policy) << policy.error().to_string();
  clef::Decision decision;
  decision.answers = {choice_answer("billing", 0.65),    // label threshold 0.6: kept
                      choice_answer("technical", 0.75),  // question threshold 0.8: abstains
                      choice_answer("other", 0.99),      // null: never trusted
                      yes_no_answer(0.05),               // P(no) 0.95 ≥ 0.9: kept
                      yes_no_answer(0.88)};              // 0.88 < 0.9: abstains
  decision.answers[1].question = decision.answers[2].question = "team";
  EXPECT_EQ(policy->apply(decision), 3u);
  EXPECT_EQ(decision.answers[0].status, clef::AnswerStatus::ok);
  EXPECT_EQ(decision.answers[1].status, clef::AnswerStatus::abstained);
  EXPECT_EQ(decision.answers[1].threshold, 0.8);
  EXPECT_EQ(decision.answers[1].winner(), "technical") << "the value is kept for a person";
  EXPECT_EQ(decision.answers[2].status, clef::AnswerStatus::abstained);
  EXPECT_FALSE(decision.answers[2].threshold.has_value());
  EXPECT_EQ(decision.answers[3].status, clef::AnswerStatus::ok);
  EXPECT_EQ(decision.answers[4].status, clef::AnswerStatus::abstained);
  EXPECT_FALSE(decision.all_ok());
}

TEST(Policy, WrittenTextReadsBackTheSame) {
  auto policy = clef::Policy::parse(policy_text, "p.json");
  ASSERT_TRUE(policy);
  auto again = clef::Policy::parse(policy->to_json(), "again");
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->to_json(), policy->to_json());
  EXPECT_EQ(again->questions.at("team").labels.at("billing"), 0.6);
  EXPECT_FALSE(again->questions.at("team").labels.at("other").has_value());
}

TEST(Policy, HostileFilesAreErrorsNamingTheField) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (
      const Case& c : {
          Case{"", "the policy"},
          Case{"[]", "not a policy file"},
          Case{R"({"schema": 7})", "not a policy file"},
          Case{R"({"schema": "clef-policy/1", "model": "m"})", "no \"questions\""},
          Case{R"({"schema": "clef-policy/1", "model": "m", "questions": {"q": 1}})",
               "must be an object"},
          Case{R"({"schema": "clef-policy/1", "model": "m", "questions": {"q": {}}})",
               "no \"threshold\""},
          Case{R"({"schema": "clef-policy/1", "model": "m", "questions": {"q": {"threshold": 2}}})",
               "number in [0, 1]"},
          Case{
              R"({"schema": "clef-policy/1", "model": "m", "questions": {"q": {"threshold": "0.5"}}})",
              "number in [0, 1]"},
          Case{
              R"({"schema": "clef-policy/1", "model": "m", "questions": {"q": {"threshold": 0.5, "labels": []}}})",
              "must be an object"},
          Case{
              R"({"schema": "clef-policy/1", "model": "m", "questions": {"q": {"threshold": 0.5, "labels": {"a": -1}}}})",
              "number in [0, 1]"},
      }) {
    auto policy = clef::Policy::parse(c.text, "p.json");
    ASSERT_FALSE(policy) << c.text;
    EXPECT_NE(policy.error().message.find(c.message), std::string::npos)
        << c.text << ": " << policy.error().to_string();
  }
  auto deep = clef::Policy::parse(std::string(100000, '[') + std::string(100000, ']'), "deep");
  EXPECT_FALSE(deep);
}

TEST(Policy, ModelIsRequired) {
  // A policy without a model used to apply to any model: thresholds fitted on one model trusted
  // another's answers.
  for (const char* text :
       {R"({"schema": "clef-policy/1", "questions": {"q": {"threshold": 0.5}}})",
        R"({"schema": "clef-policy/1", "model": "", "questions": {"q": {"threshold": 0.5}}})",
        R"({"schema": "clef-policy/1", "model": 7, "questions": {"q": {"threshold": 0.5}}})",
        R"({"schema": "clef-policy/1", "model": null, "questions": {"q": {"threshold": 0.5}}})"}) {
    auto policy = clef::Policy::parse(text, "p.json");
    ASSERT_FALSE(policy) << text;
    EXPECT_NE(policy.error().message.find("has no \"model\" string"), std::string::npos)
        << policy.error().to_string();
    EXPECT_EQ(policy.error().where, "p.json");
  }
}

/// A policy for `questions`, as `clef eval --policy-out` writes one, with `entries` as its
/// "questions".
clef::Policy policy_for(const std::vector<clef::Question>& questions, const std::string& entries) {
  const std::string text = R"({"schema": "clef-policy/1", "model": "m", "questions_sha256": ")" +
                           clef::questions_sha256(questions).value() + R"(", "questions": )" +
                           entries + "}";
  auto policy = clef::Policy::parse(text, "p.json");
  EXPECT_TRUE(policy) << policy.error().to_string();
  return policy.value();
}

TEST(Policy, RefusesQuestionsNotAskedAndLabelsNotOffered) {
  const std::vector<clef::Question> asked = {
      clef::Question::choice("team", "Which team?", {{"billing", "Money"}, {"technical", "Bugs"}}),
      clef::Question::yes_no("refund", "Money back?")};
  EXPECT_TRUE(policy_for(asked, R"({"team": {"threshold": 0.8, "labels": {"billing": 0.7}}})")
                  .check(asked, "m"));
  struct Case {
    const char* entries;
    const char* message;
    const char* where;
  };
  for (const Case& c : {
           Case{R"({"teem": {"threshold": 0.8}})", "\"teem\", which is not asked",
                "policy: questions.teem"},
           Case{R"({"team": {"threshold": 0.8, "labels": {"biling": 0.7}}})",
                "\"biling\" is not an option of team", "policy: questions.team.labels.biling"},
           Case{R"({"refund": {"threshold": 0.8, "labels": {"yes": 0.7}}})",
                "\"refund\" is not a choice question", "policy: questions.refund.labels"},
       }) {
    auto status = policy_for(asked, c.entries).check(asked, "m");
    ASSERT_FALSE(status) << c.entries;
    EXPECT_NE(status.error().message.find(c.message), std::string::npos)
        << status.error().to_string();
    EXPECT_EQ(status.error().where, c.where);
  }
  // Questions asked without a threshold are allowed (eval may label only some), and named.
  EXPECT_EQ(policy_for(asked, R"({"team": {"threshold": 0.8}})").uncovered(asked),
            std::vector<std::string>{"refund"});
  EXPECT_TRUE(policy_for(asked, R"({"team": {"threshold": 0.8}, "refund": {"threshold": null}})")
                  .uncovered(asked)
                  .empty());
}

TEST(Policy, RefusesOtherQuestionsAndOtherModels) {
  const std::vector<clef::Question> questions = {clef::Question::yes_no("refund", "Money back?")};
  const clef::Policy policy = policy_for(questions, R"({"refund": {"threshold": 0.9}})");
  EXPECT_TRUE(policy.check(questions, "m"));
  EXPECT_FALSE(policy.check({clef::Question::yes_no("refund", "Money back? ")}, "m"));
  EXPECT_FALSE(policy.check(questions, "m2"));
  auto a = clef::questions_sha256(questions);
  auto b = clef::questions_sha256({clef::Question::yes_no("refund", "Money back? ")});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a.value().size(), 64u);
  EXPECT_NE(a.value(), b.value()) << "any change of wording is another question set";
}

}  // namespace
