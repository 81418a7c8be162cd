// clef::evaluate_models, its clef-eval/1 JSON, policy_of and the gates (<clef/eval_gates.hpp>)
// on a four-item set worked out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "clef/eval_gates.hpp"
#include "clef/eval_report.hpp"

namespace {

using clef::ItemResult;
using Json = nlohmann::json;

const clef::Question refund = clef::Question::yes_no("refund", "Asks for money back?");

/// Items a, b, c, d; gold yes, no, yes, and none for d.
clef::LabelledSet four_items() {
  clef::LabelledSet set;
  set.questions = {refund};
  set.items = {{"\"a\"", {"yes"}}, {"\"b\"", {"no"}}, {"\"c\"", {"yes"}}, {"\"d\"", {""}}};
  set.dataset_sha256 = "data-digest";
  set.questions_sha256 = "questions-digest";
  return set;
}

ItemResult answered(double p_true, double latency_ms, bool sent = true) {
  clef::Answer answer;
  answer.question = "refund";
  answer.asked = clef::QuestionType::yes_no;
  answer.status = clef::AnswerStatus::ok;
  clef::YesNoAnswer value;
  value.p_true = p_true;
  answer.value = value;
  ItemResult item;
  item.decision.emplace();
  item.decision->answers.push_back(answer);
  item.decision->usage.input_tokens = 100;
  item.latency_ms = latency_ms;
  item.sent = sent;
  return item;
}

ItemResult failed(const std::string& kind, const std::string& message) {
  ItemResult item;
  item.error_kind = kind;
  item.error = message;
  return item;
}

/// A: a right (0.9), b right (0.2), c failed (timeout), d answered as a --dedupe copy.
/// B: a wrong (0.3), b right (0.4), c right (0.8), d without any result.
std::vector<clef::ModelResults> two_models() {
  return {{"A",
           {answered(0.9, 10), answered(0.2, 20), failed("timeout", "took too long"),
            answered(0.7, 0, false)}},
          {"B", {answered(0.3, 5), answered(0.4, 5), answered(0.8, 5), std::nullopt}}};
}

TEST(EvalReport, EvaluatesEachModelAndComparesThemAsWorkedOutByHand) {
  const clef::EvalReport report = clef::evaluate_models(four_items(), two_models(), {});
  ASSERT_EQ(report.models.size(), 2u);
  const clef::ModelEvaluation& a = report.models[0];
  EXPECT_EQ(a.model, "A");
  // Traffic: a, b, d answered (d a copy: no request, no latency, no tokens), c failed.
  EXPECT_EQ(a.traffic.answered, 3u);
  EXPECT_EQ(a.traffic.failed, 1u);
  EXPECT_EQ(a.traffic.missing, 0u);
  ASSERT_EQ(a.traffic.failures.count("timeout"), 1u);
  EXPECT_EQ(a.traffic.failures.at("timeout").items, 1u);
  EXPECT_EQ(a.traffic.failures.at("timeout").message, "took too long");
  EXPECT_EQ(a.traffic.latency_n, 2u);
  EXPECT_DOUBLE_EQ(a.traffic.latency_p50_ms.value(), 15.0);  // between 10 and 20
  EXPECT_EQ(a.traffic.input_tokens, 200);
  // refund: gold on a, b, c (n 3, d skipped); a and b right, c unanswered counts as wrong.
  const clef::QuestionEvaluation& q = a.questions[0];
  EXPECT_EQ(q.n, 3u);
  EXPECT_EQ(q.skipped, 1u);
  EXPECT_EQ(q.answered, 2u);
  EXPECT_DOUBLE_EQ(q.accuracy->value, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(a.overall.all_correct->value, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(a.overall.mean_accuracy.value(), 2.0 / 3.0);
  const clef::ModelEvaluation& b = report.models[1];
  EXPECT_EQ(b.traffic.missing, 1u);                             // d
  EXPECT_DOUBLE_EQ(b.questions[0].accuracy->value, 2.0 / 3.0);  // b and c right
  // A against B: only A right on a, only B right on c.
  ASSERT_EQ(report.comparisons.size(), 1u);
  EXPECT_EQ(report.comparisons[0].questions[0].only_a_right, 1u);
  EXPECT_EQ(report.comparisons[0].questions[0].only_b_right, 1u);
  EXPECT_TRUE(a.thresholds.empty());
  EXPECT_FALSE(report.target_precision.has_value());
}

TEST(EvalReport, JsonFormKeysModelsByNameAndNamesAMissingAnswer) {
  const Json json = clef::to_json(clef::evaluate_models(four_items(), two_models(), {}));
  EXPECT_EQ(json["schema"], "clef-eval/1");
  EXPECT_EQ(json["dataset_sha256"], "data-digest");
  EXPECT_EQ(json["model_order"], Json::array({"A", "B"}));
  EXPECT_EQ(json["items"], 4);
  const Json& a = json["models"]["A"];
  EXPECT_EQ(a["requests"]["failures"]["timeout"]["items"], 1);
  EXPECT_EQ(a["latency_ms"]["n"], 2);
  EXPECT_EQ(a["questions"]["refund"]["type"], "noul");
  EXPECT_EQ(a["questions"]["refund"]["confusion"]["yes"]["(no answer)"], 1);  // item c
  EXPECT_DOUBLE_EQ(a["questions"]["refund"]["accuracy"]["value"].get<double>(), 2.0 / 3.0);
  EXPECT_FALSE(a.contains("thresholds"));
  EXPECT_EQ(json["comparison"][0]["a"], "A");
  EXPECT_EQ(json["comparison"][0]["questions"]["refund"]["only_b_right"], 1);
  // Undefined is null, never a number: B's AUROC over a, b, c is defined, a model with no
  // answer has none.
  const Json nothing = clef::to_json(clef::evaluate_models(four_items(), {{"C", {}}}, {}));
  EXPECT_TRUE(nothing["models"]["C"]["questions"]["refund"]["auroc"].is_null());
  EXPECT_EQ(nothing["models"]["C"]["requests"]["missing"], 4);
  EXPECT_FALSE(nothing.contains("comparison"));
}

TEST(EvalReport, PolicyComesFromTheTypedThresholdsALabelWithoutOneFallsBack) {
  clef::EvalReport report;
  report.dataset_sha256 = "d";
  report.questions_sha256 = "q";
  report.question_names = {"team"};
  report.target_precision = 0.9;
  clef::ModelEvaluation model;
  model.model = "clef-flash";
  clef::FittedThreshold question, billing, technical;
  question.threshold = 0.8;
  billing.label = "billing";  // no threshold of its own
  technical.label = "technical";
  technical.threshold = 0.6;
  model.thresholds = {{question, billing, technical}};
  report.models = {model};
  const clef::Policy policy = clef::policy_of(report, report.models[0]);
  EXPECT_EQ(policy.model, "clef-flash");
  EXPECT_DOUBLE_EQ(policy.target_precision, 0.9);
  EXPECT_EQ(policy.dataset_sha256, "d");
  ASSERT_EQ(policy.questions.count("team"), 1u);
  EXPECT_DOUBLE_EQ(policy.questions.at("team").threshold.value(), 0.8);
  EXPECT_EQ(policy.questions.at("team").labels.count("billing"), 0u);
  EXPECT_DOUBLE_EQ(policy.questions.at("team").labels.at("technical").value(), 0.6);
}

TEST(EvalGates, RequirementsReadTheTypedReportAndNeverPassOnNothing) {
  const clef::EvalReport report = clef::evaluate_models(four_items(), two_models(), {});
  auto gate = clef::parse_requirement("refund.accuracy >= 0.9");
  ASSERT_TRUE(gate);
  auto failures = clef::failed_requirements({gate.value()}, report);
  ASSERT_TRUE(failures);
  ASSERT_EQ(failures->size(), 2u);
  EXPECT_EQ(failures->at(0), "A: refund.accuracy >= 0.9 (it is 0.6667)");
  auto holds =
      clef::failed_requirements({clef::parse_requirement("refund.n >= 3").value()}, report);
  ASSERT_TRUE(holds);
  EXPECT_TRUE(holds->empty());
  // A question the report lacks is an error, and so is a report without any model.
  EXPECT_FALSE(
      clef::failed_requirements({clef::parse_requirement("team.accuracy > 0").value()}, report));
  EXPECT_FALSE(clef::failed_requirements({gate.value()}, clef::EvalReport{}));
}

TEST(EvalGates, BaselineIsCheckedOnceAndComparedWithTheTypedReport) {
  const clef::EvalReport report = clef::evaluate_models(four_items(), two_models(), {});
  const nlohmann::ordered_json own(clef::to_json(report));
  auto self = clef::EvalBaseline::from_json(own, "data-digest", "questions-digest");
  ASSERT_TRUE(self) << self.error().message;
  auto same = clef::compare_to_baseline(report, self.value(), {});
  ASSERT_TRUE(same);
  EXPECT_GT(same->compared, 0u);
  EXPECT_TRUE(same->drops.empty());
  // Another data set's report is refused before any comparison.
  auto other = clef::EvalBaseline::from_json(own, "other-digest", "questions-digest");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("other data"), std::string::npos);
  // A baseline where A was more accurate: A's accuracy dropped, beyond no tolerance.
  nlohmann::ordered_json better = own;
  better["models"]["A"]["questions"]["refund"]["accuracy"]["value"] = 0.9;
  auto baseline = clef::EvalBaseline::from_json(better, "data-digest", "questions-digest");
  ASSERT_TRUE(baseline);
  auto dropped = clef::compare_to_baseline(report, baseline.value(), {});
  ASSERT_TRUE(dropped);
  ASSERT_EQ(dropped->drops.size(), 1u);
  EXPECT_EQ(dropped->drops[0], "A: refund.accuracy went from 0.9 to 0.6667 (tolerance 0)");
  auto tolerated = clef::compare_to_baseline(report, baseline.value(), {{"accuracy", 0.25}});
  ASSERT_TRUE(tolerated);
  EXPECT_TRUE(tolerated->drops.empty());
}

TEST(EvalGates, EachRequirementReadsWhatTheReportStatesOrSaysWhyNot) {
  const clef::EvalReport report = clef::evaluate_models(four_items(), two_models(), {});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nosuch.accuracy >= 0.5",
       "error: malformed requirement \"nosuch.accuracy >= 0.5\": \"nosuch\" is not a labelled "
       "question of the report"},
      {"refund.nosuch >= 0.5",
       "error: malformed requirement \"refund.nosuch >= 0.5\": there is no \"nosuch\" there; there "
       "is accuracy, accuracy_answered, answered, auroc, brier, coverage, ece, ece_noise_floor, "
       "f1, log_loss, macro_f1, n, precision, recall, skipped"},
      {"refund.position_flip_rate >= 0",
       "error: malformed requirement \"refund.position_flip_rate >= 0\": there is no "
       "\"position_flip_rate\" there (--permute N measures position_flip_rate, on choice and score "
       "questions); there is accuracy, accuracy_answered, answered, auroc, brier, coverage, ece, "
       "ece_noise_floor, f1, log_loss, macro_f1, n, precision, recall, skipped"},
      {"refund.repeat_mean_spread <= 1",
       "error: malformed requirement \"refund.repeat_mean_spread <= 1\": there is no "
       "\"repeat_mean_spread\" there (--repeat K measures repeat_mean_spread); there is accuracy, "
       "accuracy_answered, answered, auroc, brier, coverage, ece, ece_noise_floor, f1, log_loss, "
       "macro_f1, n, precision, recall, skipped"},
      {"lower(refund.n) >= 1",
       "error: malformed requirement \"lower(refund.n) >= 1\": n has no interval, so lower() "
       "cannot read it"},
      {"refund.precision[maybe] >= 0",
       "error: malformed requirement \"refund.precision[maybe] >= 0\": refund has no class "
       "\"maybe\" in the report (no item has it as gold, and no model answered it)"},
      {"lower(refund.accuracy) >= 0.1", ""},
      {"upper(refund.brier) <= 0.01",
       "A: upper(refund.brier) <= 0.01 (it is 0.04)\nB: upper(refund.brier) <= 0.01 (it is "
       "0.49)\n"},
      {"overall.mean_accuracy >= 0.99",
       "A: overall.mean_accuracy >= 0.99 (it is 0.6667)\nB: overall.mean_accuracy >= 0.99 (it is "
       "0.6667)\n"},
      {"cost.per_item <= 1",
       "A: cost.per_item <= 1 (cost.per_item is undefined: no decision's cost is known (give "
       "--price MODEL=INPUT for a model clef has no price for))\nB: cost.per_item <= 1 "
       "(cost.per_item is undefined: no decision's cost is known (give --price MODEL=INPUT for a "
       "model clef has no price for))\n"},
      {"refund.recall[yes] >= 0.9",
       "A: refund.recall[yes] >= 0.9 (it is 0.5)\nB: refund.recall[yes] >= 0.9 (it is 0.5)\n"},
      {"refund.f1[no] > 0.99", "B: refund.f1[no] > 0.99 (it is 0.6667)\n"},
      {"latency_ms.p95 < 0",
       "A: latency_ms.p95 < 0 (it is 19.5)\nB: latency_ms.p95 < 0 (it is 5)\n"},
      {"overall.items == 4", ""},
  };
  for (const auto& [text, expected] : cases) {
    const auto gate = clef::parse_requirement(text);
    ASSERT_TRUE(gate) << text;
    const auto failures = clef::failed_requirements({gate.value()}, report);
    std::string said;
    if (!failures) {
      said = "error: " + failures.error().message;
    } else {
      for (const auto& failure : failures.value()) said += failure + "\n";
    }
    EXPECT_EQ(said, expected) << text;
  }
}

TEST(EvalGates, AClassOnlyOneModelAnsweredIsUndefinedForTheOther) {
  // Gold is yes on a, b and c: "no" is a class only where a model answered it. A answers b no;
  // B answers every item yes. A requirement on "no" holds A to its precision and fails B's as
  // undefined, instead of refusing the requirement for a class "the report" lacks.
  clef::LabelledSet set = four_items();
  for (auto& item : set.items) item.gold = {"yes"};
  const std::vector<clef::ModelResults> runs = {
      {"A", {answered(0.9, 1), answered(0.2, 1), answered(0.8, 1), answered(0.9, 1)}},
      {"B", {answered(0.9, 1), answered(0.8, 1), answered(0.7, 1), answered(0.6, 1)}}};
  const clef::EvalReport report = clef::evaluate_models(set, runs, {});
  auto failures =
      clef::failed_requirements({clef::parse_requirement("refund.precision[no] >= 0.5").value(),
                                 clef::parse_requirement("refund.predicted[no] >= 1").value()},
                                report);
  ASSERT_TRUE(failures) << failures.error().message;
  EXPECT_EQ(failures.value(),
            (std::vector<std::string>{
                "A: refund.precision[no] >= 0.5 (it is 0)",
                "B: refund.precision[no] >= 0.5 (refund.precision[no] is undefined: no item was "
                "answered no)",
                "B: refund.predicted[no] >= 1 (it is 0)"}));
  // With no gold answer at all no class is scored: undefined for every model, never an error.
  for (auto& item : set.items) item.gold = {""};
  const clef::EvalReport unscored = clef::evaluate_models(set, runs, {});
  auto undefined = clef::failed_requirements(
      {clef::parse_requirement("refund.precision[yes] >= 0").value()}, unscored);
  ASSERT_TRUE(undefined) << undefined.error().message;
  ASSERT_EQ(undefined->size(), 2u);
  EXPECT_EQ(undefined->at(0),
            "A: refund.precision[yes] >= 0 (refund.precision[yes] is undefined: no item has a "
            "gold answer for refund)");
}

TEST(EvalGates, WhatAMessageEchoesOfARequirementIsCut) {
  // A requirement naming a 100,000-byte metric, class or question: each message stays a line.
  const clef::EvalReport report = clef::evaluate_models(four_items(), two_models(), {});
  const std::string long_name(100000, 'a');
  for (const std::string& text :
       {"refund." + long_name + " >= 0", "refund.precision[" + long_name + "] >= 0",
        long_name + ".accuracy >= 0", "refund.accuracy >= 0." + std::string(100000, '9')}) {
    auto said = clef::failed_requirements({clef::parse_requirement(text).value()}, report);
    const std::string message = said ? (said->empty() ? "" : said->front()) : said.error().message;
    EXPECT_LT(message.size(), 700u) << message.substr(0, 300);
    EXPECT_NE(message.find("bytes)"), std::string::npos) << message.substr(0, 300);
  }
}

TEST(EvalGates, AListInTheReportIsSaidToBeOneNotMissing) {
  clef::EvalReport report = clef::evaluate_models(four_items(), two_models(), {});
  for (auto& model : report.models) model.questions[0].position = clef::PositionProbe{};
  auto said = clef::failed_requirements(
      {clef::parse_requirement("refund.position_flips <= 1").value()}, report);
  ASSERT_FALSE(said);
  EXPECT_EQ(said.error().message,
            "malformed requirement \"refund.position_flips <= 1\": position_flips is a list in the "
            "report, not a number a requirement can read");
}

}  // namespace
