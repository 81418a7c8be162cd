// Parsing and validation of answers: published responses and malformed ones.
#include <gtest/gtest.h>

#include <sstream>

#include "clef/clef.hpp"
#include "wire/http_errors.hpp"
#include "wire/wire_response.hpp"
#include "wire/workers_ai.hpp"

namespace {

using clef::AnswerStatus;
using clef::Question;
using clef::detail::Json;

clef::Decision parse(const std::string& body, const std::vector<Question>& questions) {
  auto decision = clef::detail::parse_decision(Json::parse(body), body, questions, {});
  EXPECT_TRUE(decision.ok()) << (decision.ok() ? "" : decision.error().to_string());
  return decision.ok() ? decision.value() : clef::Decision{};
}

Question label_question() {
  return Question::choice("label", "Which label fits this ticket?",
                          {{"billing", "Payments and refunds"},
                           {"bug", "Software errors"},
                           {"account", "Login and account access"}});
}

Question team3(const char* third = "other") {
  return Question::choice(
      "team", "Which team?",
      {{"billing", std::nullopt}, {"technical", std::nullopt}, {third, std::nullopt}});
}

TEST(Parse, Tv1OllamaChoice) {
  const auto d = parse(R"({"model":"nimble","answers":{"label":{"type":"choice","choice":"bug",
      "probabilities":{"billing":0.0125,"bug":0.9781,"account":0.0093},"confidence":0.8906}},
      "usage":{"input_tokens":174,"output_tokens":1}})",
                       {label_question()});
  ASSERT_TRUE(d.all_ok());
  const auto* c = d.answers[0].choice();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->choice, "bug");
  EXPECT_DOUBLE_EQ(c->probability, 0.9781);
  EXPECT_EQ(c->probabilities[2].label, "account");
  EXPECT_DOUBLE_EQ(*c->server_confidence, 0.8906);
  EXPECT_NEAR(c->confidence, 0.8906, 0.002);  // Ollama's is the entropy formula, as is clef's
  EXPECT_EQ(d.model, "nimble");
  EXPECT_EQ(d.usage.input_tokens, 174);
  EXPECT_EQ(d.usage.output_tokens, 1);
}

TEST(Parse, Tv3EntropyConfidenceReproducesOllamaChoose) {
  const auto d = parse(R"({"answers":{"team":{"type":"choice","choice":"billing",
      "probabilities":{"billing":0.9764,"technical":0.0128,"other":0.0109}}}})",
                       {team3()});
  EXPECT_NEAR(d.answers[0].choice()->confidence, 0.8832, 1e-4);
}

TEST(Parse, Tv5TypeSafeNoul) {
  const auto d = parse(R"({"model":"jev-1.13.0","answers":{"is_urgent":{"type":"noul","noul":0.95}},
      "usage":{"input_tokens":296,"output_tokens":20}})",
                       {Question::yes_no("is_urgent", "Does this convey urgency?")});
  const auto* n = d.answers[0].yes_no();
  ASSERT_NE(n, nullptr);
  EXPECT_DOUBLE_EQ(n->p_true, 0.95);
  EXPECT_EQ(n->verdict, clef::Verdict::yes);
  EXPECT_EQ(d.answers[0].winner(), "yes");
}

TEST(Parse, Tv6TypeSafeChoiceWithZeroAndScoreWithLegend) {
  const auto choice = parse(
      R"({"model":"jev-1.13.0","answers":{"department":{"type":"choice",
      "choice":"billing","probabilities":{"billing":0.88,"technical":0.12,"sales":0.0},
      "confidence":0.81}},"usage":{"input_tokens":318,"output_tokens":34}})",
      {Question::choice(
          "department", "Which team?",
          {{"billing", std::nullopt}, {"technical", std::nullopt}, {"sales", std::nullopt}})});
  EXPECT_TRUE(choice.all_ok());
  EXPECT_EQ(choice.answers[0].choice()->probabilities[2].probability, 0.0);

  const auto score = parse(
      R"({"answers":{"frustration":{"type":"score","score":1.05,
      "legend":{"0":"Calm","1":"Frustrated","2":"Very angry"},
      "probabilities":{"0":0.0,"1":0.95,"2":0.05},"confidence":0.92}}})",
      {Question::score("frustration", "How frustrated?", {"Calm", "Frustrated", "Very angry"})});
  const auto* s = score.answers[0].score();
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(s->score, 1.05);
  EXPECT_EQ(s->most_likely_level, 1);
  EXPECT_EQ(score.answers[0].winner(), "Frustrated");
  EXPECT_EQ(s->labels.size(), 3u);
}

TEST(Parse, Tv12WorkersEnvelopeUnwrapped) {
  const std::string tv12 =
      R"({"result":{"model":"clef-flash","answers":{"urgent":{"type":"noul","noul":0.9539},"team":{"type":"choice","choice":"technical","probabilities":{"billing":0.0332,"technical":0.9559,"sales":0.0109},"confidence":0.8724},"severity":{"type":"score","score":2.7227,"legend":{"0":"No impact","1":"Minor","2":"Major","3":"Critical"},"probabilities":{"0":0.0156,"1":0.0145,"2":0.2016,"3":0.7683},"confidence":0.5086}},"usage":{"input_tokens":336,"output_tokens":0}},"success":true,"errors":[],"messages":[]})";
  auto inner = clef::detail::unwrap_workers_envelope(Json::parse(tv12), clef::HttpResponse{});
  ASSERT_TRUE(inner.ok());
  const auto d = parse(
      inner.value().dump(),
      {Question::yes_no("urgent", "Is this support request urgent?"), team3("sales"),
       Question::score("severity", "How severe?", {"No impact", "Minor", "Major", "Critical"})});
  ASSERT_TRUE(d.all_ok());
  EXPECT_EQ(d.answers[1].winner(), "technical");
  EXPECT_EQ(d.answers[2].score()->most_likely_level, 3);
  EXPECT_EQ(d.usage.input_tokens, 336);
}

TEST(Parse, Tv17OllayaConfidenceBeforeProbabilities) {
  const auto d =
      parse(R"({"model":"laya:en","answers":{"intent":{"type":"choice","choice":"invoice",
      "confidence":0.8995,"probabilities":{"invoice":0.933,"refund":0.021,"other":0.046}},
      "billing":{"type":"noul","noul":0.9641}},"usage":{"input_tokens":71,"output_tokens":0}})",
            {Question::choice(
                 "intent", "What?",
                 {{"invoice", std::nullopt}, {"refund", std::nullopt}, {"other", std::nullopt}}),
             Question::yes_no("billing", "Is this about billing?")});
  ASSERT_TRUE(d.all_ok());
  EXPECT_EQ(d.answers[0].choice()->choice, "invoice");
}

TEST(Parse, ShuffledKeysFollowOptionOrderAndIntegersAccepted) {
  const auto d = parse(R"({"answers":{"team":{"type":"choice","choice":"technical",
      "probabilities":{"other":0,"technical":1,"billing":0}}}})",
                       {team3()});
  const auto* c = d.answers[0].choice();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->probabilities[0].label, "billing");
  EXPECT_EQ(c->probabilities[1].probability, 1.0);
  EXPECT_DOUBLE_EQ(c->confidence, 1.0);
}

TEST(Parse, RoundedSumIsRenormalizedAndRecorded) {
  const auto d = parse(R"({"answers":{"team":{"type":"choice","choice":"billing",
      "probabilities":{"billing":0.33,"technical":0.33,"other":0.33}}}})",
                       {team3()});
  ASSERT_TRUE(d.answers[0].ok());
  EXPECT_TRUE(d.answers[0].renormalized);
  EXPECT_NEAR(d.answers[0].choice()->probabilities[0].probability, 1.0 / 3.0, 1e-12);
  const auto exact = parse(R"({"answers":{"team":{"type":"choice","choice":"billing",
      "probabilities":{"billing":0.5,"technical":0.2999,"other":0.2}}}})",
                           {team3()});
  EXPECT_FALSE(exact.answers[0].renormalized);  // within 1e-3: taken as sent
}

struct Malformed {
  std::string name;
  std::string answer;
  AnswerStatus status;
  std::string problem;
};

class MalformedAnswer : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedAnswer, IsReportedPerQuestion) {
  const Malformed& m = GetParam();
  const std::string body = R"({"answers":{"other_q":{"type":"noul","noul":0.5})" +
                           (m.answer.empty() ? std::string() : R"(,"team":)" + m.answer) + "}}";
  const auto d = parse(body, {team3(), Question::yes_no("other_q", "Fine?")});
  EXPECT_EQ(d.answers[0].status, m.status);
  EXPECT_NE(d.answers[0].problem.find(m.problem), std::string::npos) << d.answers[0].problem;
  EXPECT_EQ(d.answers[0].winner(), "");
  EXPECT_TRUE(d.answers[1].ok());  // one bad answer never spoils the others
}

INSTANTIATE_TEST_SUITE_P(
    Parse, MalformedAnswer,
    ::testing::Values(
        Malformed{"missing", "", AnswerStatus::missing, "no answer"},
        Malformed{"refusal", R"({"type":"refusal","refusal":"policy"})", AnswerStatus::refused,
                  "policy"},
        Malformed{"wrong_type", R"({"type":"noul","noul":0.4})", AnswerStatus::wrong_type,
                  "asked choice, got \"noul\""},
        Malformed{"no_probabilities", R"({"type":"choice","choice":"billing"})",
                  AnswerStatus::invalid, "no probabilities"},
        Malformed{
            "option_missing",
            R"({"type":"choice","choice":"billing","probabilities":{"billing":0.6,"technical":0.4}})",
            AnswerStatus::invalid, "no probability for \"other\""},
        Malformed{
            "unknown_option",
            R"({"type":"choice","choice":"billing","probabilities":{"billing":0.6,"technical":0.2,"other":0.1,"sales":0.1}})",
            AnswerStatus::invalid, "unknown option \"sales\""},
        Malformed{
            "out_of_range",
            R"({"type":"choice","choice":"billing","probabilities":{"billing":1.2,"technical":-0.1,"other":-0.1}})",
            AnswerStatus::invalid, "not in [0, 1]"},
        Malformed{
            "string_probability",
            R"({"type":"choice","choice":"billing","probabilities":{"billing":"0.9","technical":0.05,"other":0.05}})",
            AnswerStatus::invalid, "not in [0, 1]"},
        Malformed{
            "sum_far_off",
            R"({"type":"choice","choice":"billing","probabilities":{"billing":0.5,"technical":0.2,"other":0.1}})",
            AnswerStatus::invalid, "sum to 0.8"},
        Malformed{
            "winner_not_argmax",
            R"({"type":"choice","choice":"other","probabilities":{"billing":0.7,"technical":0.2,"other":0.1}})",
            AnswerStatus::invalid, "\"billing\" is more likely"},
        Malformed{
            "winner_unknown",
            R"({"type":"choice","choice":"sales","probabilities":{"billing":0.7,"technical":0.2,"other":0.1}})",
            AnswerStatus::invalid, "unknown option"},
        Malformed{"not_object", R"("billing")", AnswerStatus::invalid, "not an object"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(Parse, ScoreChecks) {
  const Question severity = Question::score("sev", "How bad?", {"a", "b", "c", "d", "e"});
  // A live server returned 3.99 with p4 = 1.0: accepted, reported as sent.
  auto d = parse(
      R"({"answers":{"sev":{"type":"score","score":3.99,"probabilities":{"0":0,"1":0,"2":0,"3":0,"4":1.0}}}})",
      {severity});
  ASSERT_TRUE(d.answers[0].ok()) << d.answers[0].problem;
  EXPECT_EQ(d.answers[0].score()->most_likely_level, 4);
  d = parse(
      R"({"answers":{"sev":{"type":"score","score":1.0,"probabilities":{"0":0,"1":0,"2":0,"3":0,"4":1.0}}}})",
      {severity});
  EXPECT_EQ(d.answers[0].status, AnswerStatus::invalid);
  d = parse(R"({"answers":{"sev":{"type":"score","score":1.0,"probabilities":{"0":0,"1":1}}}})",
            {severity});
  EXPECT_NE(d.answers[0].problem.find("no probability for \"2\""), std::string::npos);
}

TEST(Parse, NoulChecksAndVerdictThresholds) {
  const Question q = Question::yes_no("u", "Urgent?");
  auto d = parse(R"({"answers":{"u":{"type":"noul","noul":1.5}}})", {q});
  EXPECT_EQ(d.answers[0].status, AnswerStatus::invalid);
  d = parse(R"({"answers":{"u":{"type":"noul"}}})", {q});
  EXPECT_EQ(d.answers[0].status, AnswerStatus::invalid);
  d = parse(R"({"answers":{"u":{"type":"noul","noul":0.5}}})", {q});
  EXPECT_EQ(d.answers[0].winner(), "unknown");
  EXPECT_NEAR(d.answers[0].confidence(), 0.0, 1e-12);
  d = parse(R"({"answers":{"u":{"type":"noul","noul":0.1}}})", {q});
  EXPECT_EQ(d.answers[0].winner(), "no");
  EXPECT_DOUBLE_EQ(d.answers[0].winner_probability(), 0.9);
}

TEST(Parse, BodyLevelFailures) {
  auto no_answers =
      clef::detail::parse_decision(Json::parse(R"({"model":"x"})"), "", {team3()}, {});
  ASSERT_FALSE(no_answers.ok());
  EXPECT_EQ(no_answers.error().kind, clef::ErrorKind::invalid_response);
  EXPECT_EQ(no_answers.error().where, "answers");
  auto array = clef::detail::parse_decision(Json::parse("[]"), "[]", {team3()}, {});
  EXPECT_EQ(array.error().kind, clef::ErrorKind::invalid_response);
}

TEST(Parse, TruncatedJsonGivesByteOffset) {
  auto parsed = clef::parse_json(R"({"answers":{"team":{"ty)", "the response body",
                                 clef::ErrorKind::invalid_response);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().where, "byte 23");
  EXPECT_NE(parsed.error().message.find("truncated"), std::string::npos);
}

TEST(JsonEdge, DumpJsonReplacesInvalidUtf8InsteadOfThrowing) {
  const Json bad = {{"text", std::string("caf\xc3")}, {"n", 1}};
  EXPECT_THROW((void)bad.dump(), Json::type_error);  // what every call site used to guard
  EXPECT_EQ(clef::dump_json(bad), "{\"text\":\"caf\xef\xbf\xbd\",\"n\":1}");
  EXPECT_EQ(clef::dump_json(Json{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

TEST(JsonEdge, ReadLineKeepsAtMostMaxBytesAndGoesOnAfterALongLine) {
  std::istringstream in("abcdef\nxy\r\n\nlast");
  clef::Line line;
  ASSERT_TRUE(clef::read_line(in, line, 3));
  EXPECT_EQ(line.text, "abc");
  EXPECT_TRUE(line.too_long);
  EXPECT_TRUE(line.has_newline);
  ASSERT_TRUE(clef::read_line(in, line, 3));
  EXPECT_EQ(line.text, "xy\r");  // a CR stays: each reader decides what it means
  EXPECT_FALSE(line.too_long);
  ASSERT_TRUE(clef::read_line(in, line, 3));
  EXPECT_EQ(line.text, "");
  EXPECT_TRUE(line.has_newline);
  ASSERT_TRUE(clef::read_line(in, line, 8));
  EXPECT_EQ(line.text, "last");
  EXPECT_FALSE(line.has_newline);  // the input ended mid-line
  EXPECT_FALSE(clef::read_line(in, line, 8));
  EXPECT_TRUE(in.eof());
}

}  // namespace
