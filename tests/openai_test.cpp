// OpenAI's POST /v1/decisions dialect: the request byte for byte against a written example, the
// answers array read back into the same Decision (question order, typed choice values kept
// distinct from text, per-question refusals, cached tokens), its error bodies mapped to clef's
// kinds, its limits refused before sending, and the mock's OpenAI profile holding its schema.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "clef/clef.hpp"
#include "clef/mock.hpp"
#include "wire/http_errors.hpp"
#include "wire/wire_response.hpp"

namespace {

using Json = nlohmann::json;

std::vector<clef::Question> ticket_questions() {
  return {clef::Question::choice("team", "Which team?",
                                 {{"billing", clef::Guidance("Payments")}, {"technical", {}}}),
          clef::Question::yes_no("refund", "Asks for a refund?", "asks for money back",
                                 "anything else"),
          clef::Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"})};
}

clef::ClientOptions openai(const clef::MockServer& server, const std::string& model = "luna") {
  clef::ClientOptions options;
  options.backend = clef::Backend::openai;
  options.base_url = server.base_url() + "/v1";
  options.api_token = "sk-test";
  options.model = model;
  options.retry.max_attempts = 1;
  return options;
}

TEST(OpenAi, TheRequestIsTheWrittenExample) {
  clef::MockServer server(clef::MockProfile::openai);
  clef::DecisionRequest request;
  request.state = clef::State::json(R"({"ticket": "Charged twice", "plan": "pro"})").value();
  request.questions = ticket_questions();
  request.questions[2].level_descriptions = {std::nullopt, std::nullopt,
                                             clef::Guidance("today, or money is lost")};
  auto client = clef::Client::create(openai(server)).value();
  EXPECT_EQ(client.endpoint(request), server.base_url() + "/v1/decisions");
  EXPECT_EQ(
      client.request_body(request).value(),
      R"({"model":"luna","input":"{\"ticket\":\"Charged twice\",\"plan\":\"pro\"}",)"
      R"("questions":[{"type":"choice","name":"team","instructions":"Which team?",)"
      R"("choices":[{"value":"billing","description":"Payments"},{"value":"technical"}]},)"
      R"({"type":"predicate","name":"refund","instructions":"Asks for a refund?\nTrue means: )"
      R"(asks for money back\nFalse means: anything else"},)"
      R"({"type":"score","name":"urgency","instructions":"How urgent?","levels":[{"label":)"
      R"("Routine"},{"label":"Soon"},{"label":"Urgent","description":"today, or money is lost"}]}]})");
  // With an image: one user message, a text part and an image part.
  request.state = clef::State::text("See the receipt");
  request.questions = {clef::Question::yes_no("paid", "Paid?")};
  request.images.push_back(
      clef::Image::from_bytes(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)).value());
  EXPECT_EQ(client.request_body(request).value(),
            R"({"model":"luna","input":[{"role":"user","content":[{"type":"input_text","text":)"
            R"("See the receipt"},{"type":"input_image","image_url":)"
            R"("data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}]}],)"
            R"("questions":[{"type":"predicate","name":"paid","instructions":"Paid?"}]})");
}

clef::HttpResponse response(const std::string& body, int status = 200) {
  clef::HttpResponse out;
  out.status = status;
  out.body = body;
  out.headers = {{"x-request-id", "req_8d1c"}};
  return out;
}

TEST(OpenAi, TheAnswersArrayIsReadInQuestionOrder) {
  // Shaped as openai-python's decision.py: names echoed (null when unnamed), probabilities as
  // arrays (here not in option order), usage with input_tokens_details.
  const std::string body =
      R"({"model":"gpt-6-luna","answers":[)"
      R"({"type":"choice","name":"team","choice":"billing","confidence":0.6,"probabilities":)"
      R"([{"value":"technical","probability":0.2},{"value":"billing","probability":0.8}]},)"
      R"({"type":"predicate","name":null,"probability":0.97},)"
      R"({"type":"score","name":"urgency","score":1.1,"confidence":0.62,"probabilities":[)"
      R"({"value":0,"label":"Routine","probability":0.14},{"value":1,"label":"Soon",)"
      R"("probability":0.62},{"value":2,"label":"Urgent","probability":0.24}]}],)"
      R"("usage":{"input_tokens":212,"input_tokens_details":{"cached_tokens":128,)"
      R"("cache_write_tokens":0},"output_tokens":0,"output_tokens_details":)"
      R"({"reasoning_tokens":0},"total_tokens":212}})";
  auto decision = clef::detail::read_decision(clef::Backend::openai, response(body),
                                              ticket_questions(), {}, "sk-test");
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  EXPECT_EQ(decision->model, "gpt-6-luna");
  EXPECT_EQ(decision->request_id, "req_8d1c");
  EXPECT_EQ(decision->usage.input_tokens, 212);
  EXPECT_EQ(decision->usage.cached_input_tokens, 128);
  const auto& team = decision->answers[0];
  ASSERT_EQ(team.status, clef::AnswerStatus::ok) << team.problem;
  EXPECT_EQ(team.choice()->choice, "billing");
  EXPECT_DOUBLE_EQ(team.choice()->probabilities[0].probability, 0.8);  // option order
  EXPECT_EQ(team.raw_json, R"({"type":"choice","name":"team","choice":"billing","confidence":0.6,)"
                           R"("probabilities":[{"value":"technical","probability":0.2},)"
                           R"({"value":"billing","probability":0.8}]})");
  ASSERT_EQ(decision->answers[1].status, clef::AnswerStatus::ok) << decision->answers[1].problem;
  EXPECT_DOUBLE_EQ(decision->answers[1].yes_no()->p_true, 0.97);
  ASSERT_EQ(decision->answers[2].status, clef::AnswerStatus::ok) << decision->answers[2].problem;
  EXPECT_EQ(decision->answers[2].score()->most_likely_label, "Soon");
  EXPECT_EQ(clef::to_json(decision.value())["usage"]["cached_input_tokens"], 128);
}

TEST(OpenAi, RefusalsBooleansAndStrangersAreEachAnswersOwnStatus) {
  const auto questions = ticket_questions();
  auto read = [&](const std::string& answers) {
    return clef::detail::read_decision(
               clef::Backend::openai,
               response(R"({"model":"gpt-6-luna","answers":)" + answers +
                        R"(,"usage":{"input_tokens":1,"output_tokens":0}})"),
               questions, {}, "")
        .value();
  };
  // A refusal (no reason: OpenAI discloses none), and a boolean where clef asked text.
  auto d = read(
      R"([{"type":"refusal","name":"team"},)"
      R"({"type":"predicate","name":"refund","probability":0.5},)"
      R"({"type":"score","name":"urgency","score":0,"confidence":1,"probabilities":[)"
      R"({"value":0,"label":"Routine","probability":1},{"value":1,"label":"Soon","probability":0},)"
      R"({"value":2,"label":"Urgent","probability":0}]}])");
  EXPECT_EQ(d.answers[0].status, clef::AnswerStatus::refused);
  EXPECT_EQ(d.answers[1].status, clef::AnswerStatus::ok) << "a refusal leaves the others";
  EXPECT_EQ(d.answers[2].status, clef::AnswerStatus::ok) << d.answers[2].problem;
  auto boolean =
      read(R"([{"type":"choice","name":"team","choice":true,"confidence":0.9,"probabilities":[)"
           R"({"value":true,"probability":0.9},{"value":"technical","probability":0.1}]}])");
  EXPECT_EQ(boolean.answers[0].status, clef::AnswerStatus::invalid);
  EXPECT_EQ(boolean.answers[0].problem,
            "\"choice\" is true (a JSON boolean), not one of the options' text");
  EXPECT_EQ(boolean.answers[1].status, clef::AnswerStatus::missing);
  // Another question's answer in this one's place; a level relabelled.
  auto stranger = read(
      R"([{"type":"predicate","name":"refund","probability":0.5},null,)"
      R"({"type":"score","name":"urgency","score":0,"confidence":1,"probabilities":[)"
      R"({"value":0,"label":"Low","probability":1},{"value":1,"label":"Soon","probability":0},)"
      R"({"value":2,"label":"Urgent","probability":0}]}])");
  EXPECT_EQ(stranger.answers[0].status, clef::AnswerStatus::invalid);
  EXPECT_EQ(stranger.answers[0].problem, "the answer in this question's place is for \"refund\"");
  EXPECT_EQ(stranger.answers[2].problem, "level 0 is labelled \"Low\", not \"Routine\"");
  // What an outside probe sent (each accepted before): System One's "noul" for a predicate, a
  // value given twice, an entry that is no option, no "choice", a level index that is not one.
  const char* const score_ok =
      R"({"type":"score","name":"urgency","score":0,"confidence":1,"probabilities":[)"
      R"({"value":0,"label":"Routine","probability":1},{"value":1,"label":"Soon","probability":0},)"
      R"({"value":2,"label":"Urgent","probability":0}]})";
  struct Probe {
    std::string answers;
    std::size_t index;
    const char* problem;
  };
  for (const Probe& p : std::vector<Probe>{
           {R"([null,{"type":"noul","name":"refund","noul":0.9}])", 1,
            "\"noul\" is not one of OpenAI's answer types (predicate, choice, score, refusal)"},
           {R"([{"type":"choice","name":"team","choice":"billing","probabilities":[)"
            R"({"value":"billing","probability":0.5},{"value":"billing","probability":0.9},)"
            R"({"value":"technical","probability":0.1}]}])",
            0, "\"billing\" has two probabilities"},
           {R"([{"type":"choice","name":"team","choice":"billing","probabilities":[)"
            R"({"value":"billing","probability":0.9},{"value":"technical","probability":0.1},)"
            R"({"value":7,"probability":0.5}]}])",
            0, "a probability is for 7, not an option's text"},
           {R"([{"type":"choice","name":"team","probabilities":[)"
            R"({"value":"billing","probability":0.9},{"value":"technical","probability":0.1}]}])",
            0, "the answer has no \"choice\""},
           {R"([null,null,{"type":"score","name":"urgency","score":0,"probabilities":[)"
            R"({"value":0,"label":"Routine","probability":0.5},{"value":1.5,"probability":0.5}]}])",
            2, "a level is 1.5, not a level index (0, 1, ...)"},
           {std::string("[null,null,") + score_ok + "]", 2, ""}}) {
    auto probed = read(p.answers);
    EXPECT_EQ(probed.answers[p.index].problem, p.problem) << p.answers;
  }

  // More answers than questions, or no array: the body as a whole is unusable.
  auto extra = clef::detail::read_decision(
      clef::Backend::openai, response(R"({"model":"x","answers":[{},{},{},{}],"usage":{}})"),
      questions, {}, "");
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.error().kind, clef::ErrorKind::invalid_response);
  auto map = clef::detail::read_decision(
      clef::Backend::openai, response(R"({"model":"x","answers":{"team":{}},"usage":{}})"),
      questions, {}, "");
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.error().message.find("no \"answers\" array"), std::string::npos);
}

// A server's probabilities array of 200,000 entries is read in one pass (each entry was looked
// for among those before it: 80,000 took 20 s, 450,000 minutes), and answers what it is.
TEST(OpenAi, AProbabilitiesArrayOfManyEntriesIsReadInOnePass) {
  const auto questions = ticket_questions();
  std::string choice =
      R"({"value":"billing","probability":0.9},{"value":"technical","probability":0.1})";
  std::string score = R"({"value":0,"label":"Routine","probability":1})";
  for (int i = 0; i < 200'000; ++i) {
    choice += R"(,{"value":"l)" + std::to_string(i) + R"(","probability":0})";
    score += R"(,{"value":)" + std::to_string(i + 1) + R"(,"label":"x","probability":0})";
  }
  const std::string body =
      R"({"model":"gpt-6-luna","answers":[{"type":"choice","name":"team","choice":"billing",)"
      R"("confidence":0.9,"probabilities":[)" +
      choice +
      R"(]},null,)"
      R"({"type":"score","name":"urgency","score":0,"confidence":1,"probabilities":[)" +
      score + "]}]}";
  const auto decision =
      clef::detail::read_decision(clef::Backend::openai, response(body), questions, {}, "");
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  EXPECT_EQ(decision->answers[0].status, clef::AnswerStatus::invalid);
  EXPECT_EQ(decision->answers[0].problem, "probability for unknown option \"l0\"");
  EXPECT_EQ(decision->answers[2].status, clef::AnswerStatus::invalid);
  EXPECT_EQ(decision->answers[2].problem, "level 1 is labelled \"x\", not \"Soon\"");
  // The same entry 200,000 times: said once, as the first problem.
  std::string repeated = R"({"value":"technical","probability":0.1})";
  for (int i = 0; i < 200'000; ++i) repeated += R"(,{"value":"billing","probability":0.9})";
  const auto twice = clef::detail::read_decision(
      clef::Backend::openai,
      response(
          R"({"answers":[{"type":"choice","name":"team","choice":"billing","probabilities":[)" +
          repeated + "]}]}"),
      questions, {}, "");
  ASSERT_TRUE(twice.ok()) << twice.error().to_string();
  EXPECT_EQ(twice->answers[0].status, clef::AnswerStatus::invalid);
  EXPECT_EQ(twice->answers[0].problem, "\"billing\" has two probabilities");
}

TEST(OpenAi, ErrorBodiesMapToClefsKinds) {
  auto mapped = [](int status, const std::string& body) {
    return clef::detail::error_from_response(clef::Backend::openai, response(body, status), "luna",
                                             "sk-secret");
  };
  const auto quota =
      mapped(429, R"({"error":{"message":"You exceeded your current quota, please )"
                  R"(check your plan and billing details.","type":)"
                  R"("insufficient_quota","param":null,"code":"insufficient_quota"}})");
  EXPECT_EQ(quota.kind, clef::ErrorKind::quota_exhausted);
  EXPECT_FALSE(quota.retryable());
  EXPECT_EQ(quota.request_id, "req_8d1c");
  const auto limited =
      mapped(429, R"({"error":{"message":"Rate limit reached for requests",)"
                  R"("type":"requests","param":null,"code":"rate_limit_exceeded"}})");
  EXPECT_EQ(limited.kind, clef::ErrorKind::rate_limited);
  EXPECT_TRUE(limited.retryable());
  const auto key = mapped(401, R"({"error":{"message":"Incorrect API key provided: sk-secret.",)"
                               R"("type":"invalid_request_error","param":null,"code":)"
                               R"("invalid_api_key"}})");
  EXPECT_EQ(key.kind, clef::ErrorKind::authentication);
  EXPECT_EQ(key.to_string().find("sk-secret"), std::string::npos) << key.to_string();
  EXPECT_NE(key.message.find("OPENAI_API_KEY"), std::string::npos) << key.message;
  const auto bad = mapped(400, R"({"error":{"message":"Invalid 'questions[0].choices': provide )"
                               R"(between 2 and 255 choices.","type":"invalid_request_error",)"
                               R"("param":"questions[0].choices","code":null}})");
  EXPECT_EQ(bad.kind, clef::ErrorKind::request_rejected);
  EXPECT_EQ(bad.server_message,
            "Invalid 'questions[0].choices': provide between 2 and 255 choices.");
}

TEST(OpenAi, ThroughTheMockEndToEndWithARefusal) {
  clef::MockServer server(clef::MockProfile::openai);
  server.set_models({"luna"});
  server.set_rules(
      {{"luna", "refund", clef::MockPattern::compile("celebrity").value(), "refusal", 0.9}});
  clef::DecisionRequest request;
  request.state = clef::State::text("Is this a celebrity? Also I was charged twice.");
  request.questions = ticket_questions();
  auto decision = clef::Client::create(openai(server)).value().decide(request);
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  EXPECT_EQ(decision->answers[0].status, clef::AnswerStatus::ok) << decision->answers[0].problem;
  EXPECT_EQ(decision->answers[1].status, clef::AnswerStatus::refused);
  EXPECT_EQ(decision->answers[2].status, clef::AnswerStatus::ok) << decision->answers[2].problem;
  EXPECT_EQ(decision->request_id, "req_0a7c3");
  EXPECT_EQ(server.requests().at(0).header("Authorization"), "Bearer sk-test");

  // No key, or a model the mock does not serve: OpenAI's words, clef's kinds.
  clef::ClientOptions no_key = openai(server);
  no_key.api_token.clear();
  no_key.offline = true;  // let the client be made, to see the server's 401
  auto unauthorized = clef::Client::create(no_key).value().decide(request);
  ASSERT_FALSE(unauthorized.ok());
  EXPECT_EQ(unauthorized.error().kind, clef::ErrorKind::authentication);
  auto missing = clef::Client::create(openai(server, "gpt-7")).value().decide(request);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, clef::ErrorKind::not_found);
  EXPECT_EQ(missing.error().server_message,
            "The model `gpt-7` does not exist or you do not have access to it.");
}

TEST(OpenAi, TheMockHoldsOpenAisSchemaAndTypedValues) {
  clef::MockServer server(clef::MockProfile::openai);
  server.set_models({"luna"});
  auto send = [&](const std::string& body) {
    clef::HttpRequest raw;
    raw.url = server.base_url() + "/v1/decisions";
    raw.body = body;
    raw.headers = {{"Authorization", "Bearer sk-test"}, {"Content-Type", "application/json"}};
    auto reply = clef::make_curl_transport()->send(raw).value();
    return std::make_pair(reply.status, Json::parse(reply.body));
  };
  // A boolean and a string of the same text are two choices, answered as typed.
  auto [status, body] =
      send(R"({"model":"luna","input":"x","questions":[{"type":"choice","instructions":"?",)"
           R"("choices":[{"value":true},{"value":"true"},{"value":false}]}]})");
  ASSERT_EQ(status, 200) << body.dump();
  const Json& answer = body["answers"][0];
  EXPECT_TRUE(answer["name"].is_null());
  EXPECT_TRUE(answer["probabilities"][0]["value"].is_boolean());
  EXPECT_TRUE(answer["probabilities"][1]["value"].is_string());
  EXPECT_TRUE(answer["choice"].is_boolean() || answer["choice"] == "true");
  EXPECT_TRUE(body["usage"]["input_tokens_details"].contains("cached_tokens"));
  // Three values whose texts the simulated model might confuse: still three, summing to 1.
  auto [collide_status, collide] =
      send(R"({"model":"luna","input":"x","questions":[{"type":"choice","instructions":"?",)"
           R"json("choices":[{"value":"true"},{"value":true},{"value":"true (boolean)"}]}]})json");
  ASSERT_EQ(collide_status, 200) << collide.dump();
  double sum = 0;
  for (const auto& entry : collide["answers"][0]["probabilities"])
    sum += entry["probability"].get<double>();
  EXPECT_NEAR(sum, 1.0, 1e-9) << collide.dump();
  EXPECT_EQ(collide["answers"][0]["probabilities"].size(), 3u);

  struct Refused {
    const char* body;
    const char* message;
  };
  for (const Refused& r :
       {Refused{R"({"model":"luna","input":"x","questions":[{"type":"predicate",)"
                R"("instructions":"?","criteria":{"true":"yes"}}]})",
                "Unrecognized request argument supplied: questions[0].criteria"},
        Refused{R"({"model":"luna","input":"x","questions":[{"type":"choice","instructions":"?",)"
                R"("choices":[{"value":"a"},{"value":"a"}]}]})",
                "Invalid 'questions[0].choices': each choice must be unique."},
        Refused{R"({"model":"luna","input":"x","questions":[{"type":"choice","instructions":"?",)"
                R"("choices":[{"value":"a"}]}]})",
                "Invalid 'questions[0].choices': provide between 2 and 255 choices."},
        Refused{R"({"model":"luna","state":"x","questions":[]})",
                "Unrecognized request argument supplied: state"},
        Refused{R"({"model":"luna","input":[{"role":"system","content":"x"}],"questions":[]})",
                "Invalid value for 'input[0].role': only 'user' messages are supported."}}) {
    auto [code, error] = send(r.body);
    EXPECT_EQ(code, 400) << r.body;
    EXPECT_EQ(error["error"]["message"], r.message) << error.dump();
    EXPECT_EQ(error["error"]["type"], "invalid_request_error");
  }
}

TEST(OpenAi, WhatTheDialectCannotCarryIsRefusedBeforeSending) {
  clef::MockServer server(clef::MockProfile::openai);
  clef::DecisionRequest request;
  request.state = clef::State::text("x");
  request.questions = {clef::Question::yes_no("q", "?")};
  request.keep_alive = clef::KeepAlive::seconds(60);
  auto client = clef::Client::create(openai(server)).value();
  auto keep_alive = client.request_body(request);
  ASSERT_FALSE(keep_alive.ok());
  EXPECT_EQ(keep_alive.error().message,
            "keep_alive is an Ollama setting; OpenAI's decisions refuse it");
  request.keep_alive.reset();
  // Clips: this dialect has no field for them, even for a model named clef-omni.
  auto omni = openai(server, "clef-omni");
  request.audio.push_back(
      clef::MediaClip::from_bytes(std::string("RIFF\x28\0\0\0WAVEfmt \x10\0\0\0"
                                              "\x01\0\x01\0\x40\x1f\0\0\x40\x1f\0\0"
                                              "\x01\0\x08\0data\x04\0\0\0\x80\x80\x80\x80",
                                              48),
                                  clef::MediaKind::audio)
          .value());
  auto clips = clef::Client::create(omni).value().request_body(request);
  ASSERT_FALSE(clips.ok());
  EXPECT_EQ(clips.error().message, "OpenAI's decisions take images only, not audio or video");
  request.audio.clear();
  request.extra_fields = {{"input", "\"y\""}};
  EXPECT_FALSE(client.request_body(request).ok());
  request.extra_fields = {{"safety_identifier", "\"user_8f2c\""}};
  EXPECT_EQ(client.request_body(request).value(),
            R"({"model":"luna","input":"x","questions":[{"type":"predicate","name":"q",)"
            R"("instructions":"?"}],"safety_identifier":"user_8f2c"})");
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
