// clef's JSON for a Decision and an Error (clef/decision_json.hpp): every decision the suite's
// servers produce survives to_json -> decision_from_json -> to_json byte for byte, and what is
// not clef's JSON reads as an answer that says why, never a crash; and append_json_members, the
// text writer clef batch uses, writes what dump_json(to_json(decision)) writes, on 20,000 random
// decisions.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "clef/clef.hpp"
#include "clef/mock.hpp"

namespace {

using Json = nlohmann::ordered_json;

std::vector<clef::Question> questions() {
  return {
      clef::Question::choice("team", "Which team?",
                             {{"billing", "Money"}, {"technical", "Bugs"}, {"account", "Login"}}),
      clef::Question::yes_no("refund", "Asks for money back?"),
      clef::Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"})};
}

clef::ClientOptions options_for(clef::MockProfile profile, const std::string& base_url) {
  clef::ClientOptions options;
  options.retry.max_attempts = 1;
  if (profile == clef::MockProfile::ollama) {
    options.base_url = base_url;
  } else if (profile == clef::MockProfile::workers_ai) {
    options.backend = clef::Backend::workers_ai;
    options.base_url = base_url + "/client/v4";
    options.account_id = "acc";
    options.api_token = "test-token";
  } else {
    options.backend = clef::Backend::systemone;
    options.base_url = base_url;
  }
  // TypeSafe answers as the version that ran (jev-1.13.0): a clef-flash there is not asked for.
  if (profile == clef::MockProfile::typesafe) options.model = "jev-latest";
  return options;
}

/// The round trip, byte for byte, and the typed fields a reader acts on.
void expect_round_trip(const clef::Decision& decision, const std::string& where) {
  const Json written = clef::to_json(decision);
  const clef::Decision read = clef::decision_from_json(written, questions());
  EXPECT_EQ(clef::dump_json(clef::to_json(read)), clef::dump_json(written)) << where;
  ASSERT_EQ(read.answers.size(), decision.answers.size()) << where;
  for (std::size_t i = 0; i < read.answers.size(); ++i) {
    const clef::Answer& a = decision.answers[i];
    const clef::Answer& b = read.answers[i];
    EXPECT_EQ(b.status, a.status) << where << " " << a.question;
    EXPECT_EQ(b.winner(), a.winner()) << where << " " << a.question;
    EXPECT_EQ(b.winner_probability(), a.winner_probability()) << where << " " << a.question;
    EXPECT_EQ(b.confidence(), a.confidence()) << where << " " << a.question;
    EXPECT_EQ(b.renormalized, a.renormalized) << where << " " << a.question;
    EXPECT_EQ(b.threshold, a.threshold) << where << " " << a.question;
    if (a.score()) {
      EXPECT_EQ(b.score()->score, a.score()->score) << where;
    }
  }
  EXPECT_EQ(read.model, decision.model);
  EXPECT_EQ(read.request_id, decision.request_id);
  EXPECT_EQ(read.usage.input_tokens, decision.usage.input_tokens);
  EXPECT_EQ(read.cached, decision.cached);
}

TEST(DecisionJson, EveryServersDecisionsSurviveTheRoundTrip) {
  int checked = 0;
  int profile_number = 0;
  for (const auto profile :
       {clef::MockProfile::ollama, clef::MockProfile::workers_ai, clef::MockProfile::typesafe,
        clef::MockProfile::llamacpp, clef::MockProfile::laya, clef::MockProfile::ollaya}) {
    clef::MockServer server(profile);
    const auto client = clef::Client::create(options_for(profile, server.base_url())).value();
    for (int i = 0; i < 12; ++i) {
      clef::DecisionRequest request;
      request.state = clef::State::text("ticket " + std::to_string(i) + ": charged twice?");
      request.questions = questions();
      auto decision = client.decide(request);
      ASSERT_TRUE(decision.ok()) << decision.error().to_string();
      const std::string where =
          "profile " + std::to_string(profile_number) + " #" + std::to_string(i);
      expect_round_trip(decision.value(), where);
      // The same decision under a policy: some answers abstain, keeping their threshold.
      clef::Policy policy;
      policy.questions["team"].threshold = 0.6;
      policy.questions["refund"].threshold = 0.9;
      policy.questions["urgency"].threshold = 0.5;
      clef::Decision judged = decision.value();
      policy.apply(judged);
      expect_round_trip(judged, where + " under a policy");
      judged.cached = true;
      expect_round_trip(judged, where + " cached");
      ++checked;
    }
    ++profile_number;
  }
  EXPECT_EQ(checked, 72);
}

TEST(DecisionJson, AnswersWithoutAValueKeepTheirStatusAndProblem) {
  clef::MockServer server;
  server.set_script([](const clef::MockRequest&, int) -> std::optional<clef::MockReply> {
    clef::MockReply reply;
    reply.body =
        R"({"model":"clef-flash","answers":{"team":{"type":"refusal","refusal":"I cannot"},)"
        R"("refund":{"type":"noul","p_true":1.7}}})";
    return reply;
  });
  const auto client =
      clef::Client::create(options_for(clef::MockProfile::ollama, server.base_url())).value();
  clef::DecisionRequest request;
  request.state = clef::State::text("x");
  request.questions = questions();
  auto decision = client.decide(request);
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  EXPECT_EQ(decision->answers[0].status, clef::AnswerStatus::refused);
  EXPECT_EQ(decision->answers[1].status, clef::AnswerStatus::invalid);
  EXPECT_EQ(decision->answers[2].status, clef::AnswerStatus::missing);
  expect_round_trip(decision.value(), "refused, invalid, missing");
  const clef::Decision read =
      clef::decision_from_json(clef::to_json(decision.value()), questions());
  EXPECT_EQ(read.answers[0].problem, decision->answers[0].problem);
}

TEST(DecisionJson, WhatIsNotClefsJsonReadsAsAnswersThatSayWhy) {
  const auto read = [](const char* text) {
    return clef::decision_from_json(Json::parse(text), questions());
  };
  for (const char* text : {"null", "[1,2]", R"({"answers": 5})", R"({"answers": {"team": 7}})"}) {
    const clef::Decision decision = read(text);
    ASSERT_EQ(decision.answers.size(), 3u) << text;
    for (const auto& answer : decision.answers) EXPECT_FALSE(answer.has_value()) << text;
  }
  const clef::Decision wrong = read(
      R"({"answers": {"team": {"type": "noul", "status": "ok", "p_true": 0.5},)"
      R"("refund": {"type": "noul", "status": "ok", "p_true": "high"},)"
      R"("urgency": {"type": "score", "status": "ok", "probabilities": {"0": 0.5, "1": 2}}}})");
  EXPECT_EQ(wrong.answers[0].problem, "the answer's type is not the question's");
  EXPECT_EQ(wrong.answers[1].problem, "no p_true in [0, 1]");
  EXPECT_EQ(wrong.answers[2].problem,
            "probabilities missing, outside [0, 1] or not for the question's options");
  // Another question's options (one more than team has): not this question's answer.
  const clef::Decision other =
      read(R"({"answers": {"team": {"type": "choice", "status": "ok", "probabilities": )"
           R"({"billing": 0.1, "technical": 0.1, "account": 0.1, "sales": 0.7}}}})");
  EXPECT_FALSE(other.answers[0].has_value());
  // A tie goes to the winner the line records (its options may have been sent in another
  // order), when it is one of the most likely.
  const clef::Decision tie =
      read(R"({"answers": {"team": {"type": "choice", "status": "ok", "winner": "account", )"
           R"("probabilities": {"billing": 0.45, "technical": 0.1, "account": 0.45}}}})");
  EXPECT_EQ(tie.answers[0].winner(), "account");
  const clef::Decision not_a_tie =
      read(R"({"answers": {"team": {"type": "choice", "status": "ok", "winner": "technical", )"
           R"("probabilities": {"billing": 0.45, "technical": 0.1, "account": 0.45}}}})");
  EXPECT_EQ(not_a_tie.answers[0].winner(), "billing");  // the record cannot overrule p
  const clef::Decision choice_only =
      read(R"({"answers": {"team": {"type": "choice", "status": "ok",)"
           R"("probabilities": {"billing": 0.2, "technical": 0.7, "account": 0.1}}}})");
  EXPECT_EQ(choice_only.answers[0].winner(), "technical");  // the argmax, as the client picks it
}

TEST(DecisionJson, AnErrorRoundTripsWhatItWrites) {
  clef::Error error = clef::make_error(clef::ErrorKind::rate_limited, "slow down", "answers.team");
  error.http_status = 429;
  error.server_message = "Too many requests";
  error.server_code = "3040";
  error.request_id = "req-1";
  const Json written = clef::to_json(error);
  const clef::Error read = clef::error_from_json(written);
  EXPECT_EQ(clef::dump_json(clef::to_json(read)), clef::dump_json(written));
  EXPECT_EQ(read.kind, clef::ErrorKind::rate_limited);
  EXPECT_EQ(read.http_status, 429);
  EXPECT_EQ(read.where, "answers.team");
  // Hostile or foreign: never a throw, a kind clef knows, a message to show.
  const clef::Error odd = clef::error_from_json(Json::parse(R"({"kind": "weird", "status": 99})"));
  EXPECT_EQ(odd.kind, clef::ErrorKind::invalid_response);
  EXPECT_EQ(odd.http_status, 0);
  EXPECT_EQ(odd.message, "failed");
  EXPECT_EQ(clef::error_from_json(Json("boom")).message, "failed");
}

}  // namespace

// --- append_json_members: the same bytes as dump_json(to_json(decision)) ----------------------

namespace random_decisions {

/// Text of every kind a server or a file can put in a decision: plain, escaped, multi-byte,
/// and bytes that are not UTF-8 (stray continuations, cut sequences, overlongs, surrogates).
std::string text(std::mt19937_64& rng) {
  static const std::vector<std::string> pieces = {"a",
                                                  "billing",
                                                  " ",
                                                  "\"",
                                                  "\\",
                                                  "/",
                                                  "\n",
                                                  "\t",
                                                  "\x01",
                                                  "\x1f",
                                                  "\x7f",
                                                  "é",
                                                  "€",
                                                  "😀",
                                                  "\x80",
                                                  "\xff",
                                                  "\xc3",
                                                  "\xe2\x82",
                                                  "\xf0\x9f\x98",
                                                  "\xc0\xaf",
                                                  "\xed\xa0\x80",
                                                  "\xf4\x90\x80\x80",
                                                  "\u2028",
                                                  "0",
                                                  "-"};
  std::string out;
  const auto length = rng() % 6;
  for (std::uint64_t i = 0; i < length; ++i) out += pieces[rng() % pieces.size()];
  return out;
}

double number(std::mt19937_64& rng) {
  static const std::vector<double> edges = {0.0,
                                            -0.0,
                                            1.0,
                                            0.5,
                                            1e-5,
                                            1e-4,
                                            0.1 + 0.2,
                                            1e15,
                                            1e16,
                                            1e21,
                                            123456789.125,
                                            5e-324,
                                            1.7976931348623157e308,
                                            std::numeric_limits<double>::quiet_NaN(),
                                            std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity()};
  switch (rng() % 3) {
    case 0:
      return edges[rng() % edges.size()];
    case 1:
      return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    default: {
      const std::uint64_t bits = rng();
      double value = 0;
      std::memcpy(&value, &bits, sizeof value);
      return value;
    }
  }
}

std::optional<double> maybe_number(std::mt19937_64& rng) {
  return rng() % 2 ? std::optional<double>(number(rng)) : std::nullopt;
}

void fill_value(clef::Answer& answer, std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      break;  // no value: its problem is written instead
    case 1: {
      clef::ChoiceAnswer choice;
      for (auto n = rng() % 4; n > 0; --n) choice.probabilities.push_back({text(rng), number(rng)});
      if (!choice.probabilities.empty()) choice.choice = choice.probabilities[0].label;
      choice.probability = number(rng);
      choice.server_confidence = maybe_number(rng);
      choice.confidence = number(rng);
      answer.value = choice;
      break;
    }
    case 2:
      answer.value =
          clef::YesNoAnswer{number(rng), static_cast<clef::Verdict>(rng() % 3), number(rng)};
      break;
    case 3: {
      clef::ScoreAnswer score;
      score.score = number(rng);
      for (auto n = rng() % 12; n > 0; --n) score.probabilities.push_back(number(rng));
      score.most_likely_level = static_cast<int>(rng() % 12) - 1;
      for (std::size_t i = 0; i < score.probabilities.size(); ++i)
        score.labels.push_back(text(rng));
      if (rng() % 4 && !score.labels.empty())
        score.most_likely_label = score.labels[rng() % score.labels.size()];
      score.server_confidence = maybe_number(rng);
      score.confidence = number(rng);
      answer.value = score;
      break;
    }
    default:
      answer.value =
          clef::BoxAnswer{number(rng), number(rng), number(rng), number(rng), number(rng)};
  }
}

clef::Decision decision(std::mt19937_64& rng) {
  clef::Decision d;
  d.model = text(rng);
  d.usage = {static_cast<std::int64_t>(rng()), static_cast<std::int64_t>(rng() % 1000),
             static_cast<std::int64_t>(rng() % 3) - 1};
  d.request_id = text(rng);
  for (auto n = rng() % 4; n > 0; --n) {
    clef::Answer answer;
    answer.question = rng() % 8 ? text(rng) : "team";  // sometimes twice
    answer.asked = static_cast<clef::QuestionType>(rng() % 4);
    answer.status = static_cast<clef::AnswerStatus>(rng() % 6);
    answer.problem = text(rng);
    answer.renormalized = rng() % 2;
    answer.threshold = maybe_number(rng);
    fill_value(answer, rng);
    d.answers.push_back(answer);
  }
  d.cached = rng() % 2;
  d.host = rng() % 2 ? text(rng) : "";
  if (rng() % 2) d.gateway = clef::GatewayReport{text(rng), text(rng)};
  d.cost = {maybe_number(rng), static_cast<clef::CostSource>(rng() % 5), maybe_number(rng),
            maybe_number(rng)};
  return d;
}

}  // namespace random_decisions

TEST(DecisionJson, MembersAreWrittenAsTheJsonValueDumps) {
  std::mt19937_64 rng(20261206);
  for (int i = 0; i < 20000; ++i) {
    const clef::Decision d = random_decisions::decision(rng);
    const std::string dumped = clef::dump_json(clef::to_json(d));
    std::string written = "{";
    clef::append_json_members(written, d);
    written += '}';
    ASSERT_EQ(written, dumped) << "decision " << i;
  }
}

TEST(DecisionJson, NumbersAndTextAreWrittenAsTheJsonValueDumps) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const double x = random_decisions::number(rng);
    std::string number;
    clef::append_json_number(number, x);
    ASSERT_EQ(number, clef::dump_json(Json(x))) << i;
    const std::string s = random_decisions::text(rng);
    std::string text;
    clef::append_json_text(text, s);
    ASSERT_EQ(text, clef::dump_json(Json(s))) << i;
  }
}
