// Through libcurl, against a real HTTP server on 127.0.0.1 that behaves like each server.
#include <gtest/gtest.h>

#include <thread>

#include "clef/clef.hpp"
#include "fake_server.hpp"
#include "wait_until.hpp"

namespace {

using clef::ErrorKind;
using clef::testing::FakeServer;
using clef::testing::Scripted;
using clef::testing::ServerShape;
using namespace std::chrono_literals;

clef::DecisionRequest three_questions() {
  clef::DecisionRequest request;
  request.state =
      clef::State::json(R"({"ticket":"I was charged twice. Please refund the extra payment."})")
          .value();
  request.questions = {
      clef::Question::choice("team", "Which team should handle this ticket?",
                             {{"billing", "Payments and refunds"},
                              {"technical", "Bugs and integrations"},
                              {"other", "None of the above"}}),
      clef::Question::yes_no("refund", "Does the customer explicitly ask for a refund?"),
      clef::Question::score("urgency", "How urgent is this ticket?",
                            {"Routine", "Soon", "Urgent"})};
  return request;
}

clef::ClientOptions options_for(const FakeServer& server, ServerShape shape) {
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.backend = shape == ServerShape::ollama       ? clef::Backend::ollama
                    : shape == ServerShape::workers_ai ? clef::Backend::workers_ai
                                                       : clef::Backend::systemone;
  if (shape == ServerShape::workers_ai) {
    options.base_url += "/client/v4";
    options.account_id = "0123abcd";
    options.api_token = "test-token";
  }
  // TypeSafe answers as the version that ran (jev-1.13.0): a clef-flash there is not asked for.
  if (shape == ServerShape::typesafe) options.model = "jev-latest";
  options.retry.initial_backoff = 1ms;
  options.retry.max_backoff = 5ms;
  options.request_timeout = 5s;
  return options;
}

class EachServer : public ::testing::TestWithParam<ServerShape> {};

TEST_P(EachServer, DecidesAllThreeTypes) {
  FakeServer server(GetParam());
  auto client = clef::Client::create(options_for(server, GetParam())).value();
  auto decision = client.decide(three_questions());
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  ASSERT_EQ(decision->answers.size(), 3u);
  for (const auto& answer : decision->answers)
    EXPECT_TRUE(answer.ok()) << answer.question << ": " << answer.problem;
  const auto* team = decision->answers[0].choice();
  ASSERT_NE(team, nullptr);
  EXPECT_EQ(team->probabilities[0].label,
            "billing");  // option order, whatever the server's key order
  double sum = 0;
  for (const auto& p : team->probabilities) sum += p.probability;
  EXPECT_NEAR(sum, 1.0, 1e-9 + (decision->answers[0].renormalized ? 0 : 1e-3));
  EXPECT_EQ(decision->answers[2].score()->probabilities.size(), 3u);
  EXPECT_GT(decision->usage.input_tokens, 0);
  EXPECT_FALSE(decision->raw_json.empty());

  const auto sent = server.requests().at(0);
  EXPECT_EQ(sent.header("Content-Type"), "application/json");
  EXPECT_EQ(sent.body, client.request_body(three_questions()).value());
}

INSTANTIATE_TEST_SUITE_P(Servers, EachServer,
                         ::testing::Values(ServerShape::ollama, ServerShape::workers_ai,
                                           ServerShape::typesafe, ServerShape::llamacpp,
                                           ServerShape::laya, ServerShape::ollaya));

TEST(EndToEnd, RequestIdsAndUnknownFieldsKept) {
  FakeServer typesafe(ServerShape::typesafe);
  auto d = clef::Client::create(options_for(typesafe, ServerShape::typesafe))
               .value()
               .decide(three_questions());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->request_id, "req_0");
  EXPECT_EQ(d->model, "jev-1.13.0");

  FakeServer workers(ServerShape::workers_ai);
  d = clef::Client::create(options_for(workers, ServerShape::workers_ai))
          .value()
          .decide(three_questions());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->request_id, "cf-0-5e3f0c1a");
  EXPECT_EQ(d->raw_json.find("\"success\""), std::string::npos);  // the envelope is gone

  FakeServer laya(ServerShape::laya);
  d = clef::Client::create(options_for(laya, ServerShape::laya)).value().decide(three_questions());
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->raw_json.find("\"routing\""), std::string::npos);
}

TEST(EndToEnd, ReusesOneKeepAliveConnection) {
  FakeServer server;
  auto client = clef::Client::create(options_for(server, ServerShape::ollama)).value();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client.decide(three_questions()).ok());
  const auto requests = server.requests();
  for (const auto& r : requests) EXPECT_EQ(r.remote_port, requests[0].remote_port);
}

TEST(EndToEnd, OllamaModelMissingNotDecisionAndTooOld) {
  FakeServer server;
  auto options = options_for(server, ServerShape::ollama);
  options.model = "clef";
  auto error = clef::Client::create(options).value().decide(three_questions()).error();
  EXPECT_EQ(error.kind, ErrorKind::not_found);
  EXPECT_NE(error.message.find("ollama pull clef"), std::string::npos);
  EXPECT_EQ(server.request_count(), 1);  // not retried

  options.model = "llama3";
  error = clef::Client::create(options).value().decide(three_questions()).error();
  EXPECT_EQ(error.kind, ErrorKind::request_rejected);
  EXPECT_EQ(error.server_message, "\"llama3\" does not support decisions");

  server.set_version("0.30.0");
  options.model = "clef-flash";
  error = clef::Client::create(options).value().decide(three_questions()).error();
  EXPECT_EQ(error.kind, ErrorKind::not_found);
  EXPECT_NE(error.message.find("upgrade Ollama"), std::string::npos);
}

TEST(EndToEnd, OllamaRefusesOversizeBodyWith413) {
  FakeServer server;
  auto request = three_questions();
  request.state = clef::State::text(std::string(70 * 1024, 'a'));
  auto error = clef::Client::create(options_for(server, ServerShape::ollama))
                   .value()
                   .decide(request)
                   .error();
  EXPECT_EQ(error.kind, ErrorKind::request_rejected);
  EXPECT_EQ(error.http_status, 413);
  EXPECT_EQ(error.server_message, "request body must not exceed 64 KiB without images");
}

TEST(EndToEnd, WorkersBadTokenIsAuthentication) {
  FakeServer server(ServerShape::workers_ai);
  ASSERT_TRUE(server.set_token("test-token"));  // by default the mock takes any token
  auto options = options_for(server, ServerShape::workers_ai);
  options.api_token = "wrong-token";
  auto error = clef::Client::create(options).value().decide(three_questions()).error();
  EXPECT_EQ(error.kind, ErrorKind::authentication);
  EXPECT_EQ(error.server_code, "10000");
  EXPECT_EQ(error.to_string().find("wrong-token"), std::string::npos);
}

TEST(EndToEnd, ImagesReachEachServerInItsForm) {
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  for (auto shape : {ServerShape::ollama, ServerShape::workers_ai, ServerShape::llamacpp}) {
    FakeServer server(shape);
    auto request = three_questions();
    request.images.push_back(clef::Image::from_bytes(png).value());
    auto d = clef::Client::create(options_for(server, shape)).value().decide(request);
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().to_string());
  }
}

TEST(EndToEnd, SlowResponsePastTheTimeoutIsRetriedThenTimesOut) {
  FakeServer server;
  server.set_script(
      [](const auto&, int) { return Scripted{200, "{}", "application/json", {}, 600ms, {}}; });
  auto options = options_for(server, ServerShape::ollama);
  options.request_timeout = 150ms;
  options.retry.max_attempts = 2;
  auto error = clef::Client::create(options).value().decide(three_questions()).error();
  // No clock: an answer waited out would have been "{}", an invalid_response, not a timeout.
  EXPECT_EQ(error.kind, ErrorKind::timeout) << error.to_string();
  EXPECT_EQ(server.request_count(), 2);
}

TEST(EndToEnd, TruncatedBodyIsAConnectionFailure) {
  FakeServer server;
  server.set_script([](const auto&, int) {
    Scripted s;
    s.body = R"({"model":"clef-flash","answers":{"refund":{"type":"noul","noul":0.9}}})";
    s.truncate_at = 20;
    return s;
  });
  auto options = options_for(server, ServerShape::ollama);
  options.retry.max_attempts = 1;
  auto error = clef::Client::create(options).value().decide(three_questions()).error();
  EXPECT_EQ(error.kind, ErrorKind::connection_failed);
  EXPECT_NE(error.message.find("cut short after 20 bytes"), std::string::npos) << error.message;
}

TEST(EndToEnd, InvalidJsonAtByteOffset) {
  FakeServer server;
  server.set_script([](const auto&, int) { return Scripted{200, R"({"answers": nope})"}; });
  auto error = clef::Client::create(options_for(server, ServerShape::ollama))
                   .value()
                   .decide(three_questions())
                   .error();
  EXPECT_EQ(error.kind, ErrorKind::invalid_response);
  EXPECT_EQ(error.where, "byte 13");
  EXPECT_EQ(error.http_status, 200);
}

TEST(EndToEnd, ServerErrorsOfEachShape) {
  struct Case {
    ServerShape shape;
    int status;
    std::string body;
    ErrorKind kind;
    std::string server_message;
  };
  const std::vector<Case> cases = {
      {ServerShape::ollama, 500, R"({"error":"llama runner process has terminated"})",
       ErrorKind::server_error, "llama runner process has terminated"},
      {ServerShape::workers_ai, 429,
       R"({"result":null,"success":false,"errors":[{"code":3040,"message":"Capacity temporarily exceeded"}],"messages":[]})",
       ErrorKind::rate_limited, "Capacity temporarily exceeded"},
      {ServerShape::typesafe, 529,
       R"({"detail":{"type":"overloaded_error","message":"Overloaded"}})", ErrorKind::server_error,
       "Overloaded"},
      {ServerShape::llamacpp, 422,
       R"({"error":{"code":422,"message":"questions: required","type":"unprocessable_entity_error"}})",
       ErrorKind::request_rejected, "questions: required"},
      {ServerShape::laya, 400, R"({"detail":"state is empty"})", ErrorKind::request_rejected,
       "state is empty"},
      {ServerShape::ollaya, 503, R"({"error":"queue full","code":"QUEUE_FULL","detail":null})",
       ErrorKind::server_error, "queue full"},
  };
  for (const auto& c : cases) {
    FakeServer server(c.shape);
    server.set_script([&](const auto&, int) {
      return Scripted{c.status, c.body, "application/json", {{"Retry-After", "0"}}};
    });
    auto options = options_for(server, c.shape);
    auto error = clef::Client::create(options).value().decide(three_questions()).error();
    EXPECT_EQ(error.kind, c.kind) << c.body;
    EXPECT_EQ(error.http_status, c.status);
    EXPECT_EQ(error.server_message, c.server_message);
    EXPECT_EQ(server.request_count(), error.retryable() ? 3 : 1) << c.body;
  }
}

TEST(EndToEnd, ConnectionRefused) {
  clef::ClientOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port());
  options.retry.max_attempts = 2;
  options.retry.initial_backoff = 1ms;
  auto error = clef::Client::create(options).value().decide(three_questions()).error();
  EXPECT_EQ(error.kind, ErrorKind::connection_failed);
  EXPECT_NE(error.message.find("after 2 attempts"), std::string::npos);
}

TEST(EndToEnd, ResponseSizeCap) {
  FakeServer server;
  server.set_script([](const auto&, int) {
    return Scripted{200, std::string(100000, ' ') + "{}"};
  });
  auto options = options_for(server, ServerShape::ollama);
  options.max_response_bytes = 4096;
  auto error = clef::Client::create(options).value().decide(three_questions()).error();
  EXPECT_EQ(error.kind, ErrorKind::invalid_response);
  EXPECT_NE(error.message.find("4096-byte limit"), std::string::npos);
}

TEST(EndToEnd, CancelStopsAnInFlightRequest) {
  FakeServer server;
  server.set_script(
      [](const auto&, int) { return Scripted{200, "{}", "application/json", {}, 3000ms, {}}; });
  std::atomic<bool> cancel{false};
  auto options = options_for(server, ServerShape::ollama);
  options.cancel = &cancel;
  std::thread canceller([&] {
    // Cancelled while the request is at the server, not before it is sent.
    clef::testing::wait_until([&] { return server.request_count() >= 1; }, "the request");
    cancel = true;
  });
  auto error = clef::Client::create(options).value().decide(three_questions()).error();
  canceller.join();
  EXPECT_EQ(error.kind, ErrorKind::cancelled) << error.to_string();
  // No clock needed: waited out, the "{}" would have come back as an invalid_response.
}

}  // namespace
