// clef::MockServer as an application's tests use it: faults on demand, a request log, answers
// from rules and from a cassette.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "clef/cassette.hpp"
#include "clef/client.hpp"
#include "clef/mock.hpp"
#include "clef/question.hpp"
#include "clef/transport.hpp"

namespace {

clef::DecisionRequest ticket(const std::string& text) {
  clef::DecisionRequest request;
  request.state = clef::State::text(text);
  request.questions = {clef::Question::yes_no("refund", "Does the customer want money back?")};
  return request;
}

clef::Client client_for(const clef::MockServer& server, int attempts = 1) {
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.max_attempts = attempts;
  return clef::Client::create(options).value();
}

TEST(Mock, FailRatesAreDrawnFromTheSeed) {
  auto failures = [](std::uint64_t seed) {
    clef::MockServer server;
    clef::MockFaults faults;
    faults.fail_rates = {{503, 0.3}, {429, 0.1}};
    faults.retry_after_seconds = 0;
    faults.seed = seed;
    server.set_faults(faults);
    auto client = client_for(server);
    std::string pattern;
    for (int i = 0; i < 200; ++i) {
      auto decision = client.decide(ticket("ticket " + std::to_string(i)));
      pattern += decision ? '.' : (decision.error().http_status == 503 ? '5' : '4');
    }
    return pattern;
  };
  const std::string a = failures(7);
  EXPECT_EQ(a, failures(7)) << "the same seed fails the same requests";
  EXPECT_NE(a, failures(8));
  const auto count = [&](char c) { return std::count(a.begin(), a.end(), c); };
  EXPECT_GT(count('5'), 40);  // 30% of 200 = 60
  EXPECT_LT(count('5'), 80);
  EXPECT_GT(count('4'), 8);  // 10% = 20
  EXPECT_LT(count('4'), 35);
}

TEST(Mock, PastItsCapacityABusyServerAnswers503AtOnce) {
  clef::MockServer server;
  server.set_latency(std::chrono::milliseconds(400));
  clef::MockFaults faults;
  faults.capacity = 2;  // Ollama with OLLAMA_NUM_PARALLEL=2 and a full queue
  server.set_faults(faults);
  // The four reach admission together, however late a thread starts: none finds a place that
  // an earlier one has already given back.
  server.set_script([&server](const clef::MockRequest&, int) -> std::optional<clef::MockReply> {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (server.request_count() < 4 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::nullopt;
  });
  const clef::Client client = client_for(server);
  std::vector<std::future<clef::Result<clef::Decision>>> answers;
  for (int i = 0; i < 4; ++i) {
    answers.push_back(std::async(
        std::launch::async, [&client, i] { return client.decide(ticket(std::to_string(i))); }));
  }
  int answered = 0, busy = 0;
  for (auto& answer : answers) {
    auto result = answer.get();
    if (result) {
      ++answered;
    } else if (result.error().http_status == 503) {
      ++busy;
      EXPECT_NE(result.error().to_string().find("server busy"), std::string::npos)
          << result.error().to_string();
    }
  }
  EXPECT_EQ(answered, 2);
  EXPECT_EQ(busy, 2);
  // The places are given back: two more are answered.
  EXPECT_TRUE(client.decide(ticket("again")));
}

TEST(Mock, QuotaAndDropsLookLikeTheRealThing) {
  clef::MockServer workers(clef::MockProfile::workers_ai);
  clef::MockFaults quota;
  quota.quota_exhausted = true;
  workers.set_faults(quota);
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.base_url = workers.base_url() + "/client/v4";
  options.account_id = "acc";
  options.api_token = "test-token";
  auto decision = clef::Client::create(options).value().decide(ticket("x"));
  ASSERT_FALSE(decision);
  EXPECT_EQ(decision.error().kind, clef::ErrorKind::quota_exhausted)
      << decision.error().to_string();

  clef::MockServer dropping;
  clef::MockFaults drops;
  drops.drop_rate = 1;
  dropping.set_faults(drops);
  auto dropped = client_for(dropping).decide(ticket("x"));
  ASSERT_FALSE(dropped);
  EXPECT_EQ(dropped.error().kind, clef::ErrorKind::connection_failed)
      << dropped.error().to_string();
}

// A score whose levels are structured, as Workers AI's schema allows: answered there (labels from
// the levels), refused by a server documented with strings only (llama.cpp), naming the level.
TEST(Mock, StructuredScoreLevelsWhereTheSchemaTakesThem) {
  auto urgency = clef::parse_questions(
      R"({"urgency": {"type": "score", "instructions": "How urgent?", "criteria": ["Routine",)"
      R"( {"level": "Soon", "examples": ["next week"]}, "Urgent"]}})");
  ASSERT_TRUE(urgency.ok()) << urgency.error().to_string();
  clef::DecisionRequest request = ticket("The site is down for everyone.");
  request.questions = urgency.value();

  clef::MockServer workers(clef::MockProfile::workers_ai);
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.base_url = workers.base_url() + "/client/v4";
  options.account_id = "acc";
  options.api_token = "test-token";
  auto decision = clef::Client::create(options).value().decide(request);
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  const clef::ScoreAnswer* score = decision->answers.at(0).score();
  ASSERT_NE(score, nullptr) << decision->raw_json;
  EXPECT_EQ(score->labels, (std::vector<std::string>{"Routine", "Soon", "Urgent"}));
  const auto sent = nlohmann::json::parse(workers.requests().back().body);
  EXPECT_EQ(sent["questions"]["urgency"]["criteria"][1]["examples"][0], "next week");

  clef::MockServer llamacpp(clef::MockProfile::llamacpp);
  clef::ClientOptions plain;
  plain.backend = clef::Backend::systemone;
  plain.base_url = llamacpp.base_url();
  plain.retry.max_attempts = 1;
  auto refused = clef::Client::create(plain).value().decide(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, clef::ErrorKind::request_rejected) << refused.error().to_string();
  EXPECT_NE(refused.error().message.find("questions.urgency.criteria[1]: must be a string"),
            std::string::npos)
      << refused.error().to_string();
}

TEST(Mock, TheLogShowsWhatWasSentWithoutTheToken) {
  const std::string log = ::testing::TempDir() + "mock.log.jsonl";
  std::remove(log.c_str());
  clef::MockServer server(clef::MockProfile::workers_ai);
  ASSERT_TRUE(server.set_log(log));
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.base_url = server.base_url() + "/client/v4";
  options.account_id = "acc";
  options.api_token = "test-token";
  ASSERT_TRUE(clef::Client::create(options).value().decide(ticket("charged twice")));
  std::ifstream in(log);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const auto logged = nlohmann::json::parse(line);
  EXPECT_EQ(logged["method"], "POST");
  EXPECT_EQ(logged["path"], "/client/v4/accounts/acc/ai/run/@cf/cloudflare/clef-flash");
  EXPECT_EQ(logged["body"]["state"], "charged twice");
  EXPECT_EQ(line.find("test-token"), std::string::npos);
}

TEST(Mock, RulesThenTheCassetteThenTheDefault) {
  const std::string cassette = ::testing::TempDir() + "mock.cassette.jsonl";
  std::remove(cassette.c_str());
  {
    // Record a real exchange whose answer differs from what the mock's default would say.
    clef::MockServer recorded;
    recorded.set_script([](const clef::MockRequest&, int) {
      clef::MockReply reply;
      reply.body = R"({"model":"clef-flash","answers":{"refund":{"type":"noul","noul":0.123}}})";
      return std::optional<clef::MockReply>(reply);
    });
    auto recording =
        clef::make_recording_transport(clef::make_curl_transport(), cassette, "ollama");
    clef::ClientOptions options;
    options.base_url = recorded.base_url();
    options.transport = recording.value();
    ASSERT_TRUE(clef::Client::create(options).value().decide(ticket("from the cassette")));
  }
  clef::MockServer server;
  const clef::Status replaying = server.set_cassette(cassette);
  ASSERT_TRUE(replaying) << replaying.error().to_string();
  auto rules = clef::parse_mock_rules(
      R"({"rules": [{"question": "refund", "match": "refund", "answer": "yes", "probability": 0.8}]})");
  ASSERT_TRUE(rules) << rules.error().to_string();
  server.set_rules(*rules);
  auto client = client_for(server);
  EXPECT_DOUBLE_EQ(client.decide(ticket("please refund"))->answers[0].yes_no()->p_true, 0.8);
  EXPECT_DOUBLE_EQ(client.decide(ticket("from the cassette"))->answers[0].yes_no()->p_true, 0.123);
  auto fallback = client.decide(ticket("anything else"));
  ASSERT_TRUE(fallback);
  EXPECT_EQ(client.decide(ticket("anything else"))->answers[0].yes_no()->p_true,
            fallback->answers[0].yes_no()->p_true)
      << "the default is deterministic";
  auto bad =
      clef::parse_mock_rules(R"({"rules": [{"question": "q", "match": "(", "answer": "a"}]})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not an RE2 regular expression"), std::string::npos)
      << bad.error().message;
  const int port = clef::unused_port();
  auto fixed = clef::MockServer::start(clef::MockProfile::ollama, port);
  ASSERT_TRUE(fixed) << fixed.error().to_string();
  EXPECT_EQ(fixed->port(), port);
  EXPECT_TRUE(client_for(*fixed).decide(ticket("x")));
}

/// Workers AI's route on `server`, with `authorization` as the Authorization header (none when
/// empty).
clef::HttpResponse workers_post(const clef::MockServer& server, const std::string& authorization) {
  clef::HttpRequest request;
  request.url = server.base_url() + "/client/v4/accounts/acc/ai/run/@cf/cloudflare/clef-flash";
  request.headers = {{"Content-Type", "application/json"}};
  if (!authorization.empty()) request.headers.emplace_back("Authorization", authorization);
  request.body =
      R"({"model":"clef-flash","state":"x","questions":{"u":{"type":"noul","instructions":"U?"}}})";
  auto response = clef::make_curl_transport()->send(request);
  EXPECT_TRUE(response) << response.error().to_string();
  return response ? response.value() : clef::HttpResponse{};
}

/// True when `response` is Workers AI's 401: its envelope with code 10000.
::testing::AssertionResult is_workers_401(const clef::HttpResponse& response) {
  if (response.status != 401) {
    return ::testing::AssertionFailure() << "status " << response.status << ": " << response.body;
  }
  const auto body = nlohmann::json::parse(response.body, nullptr, false);
  const auto expected = nlohmann::json::parse(
      R"({"errors":[{"message":"Authentication error","code":10000}],"success":false,"result":{},"messages":[]})");
  if (body != expected) return ::testing::AssertionFailure() << "body " << response.body;
  return ::testing::AssertionSuccess();
}

clef::ClientOptions workers_options(const clef::MockServer& server, std::string token) {
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.base_url = server.base_url() + "/client/v4";
  options.account_id = "acc";
  options.api_token = std::move(token);
  options.retry.max_attempts = 1;
  return options;
}

// Issue 18: the Workers AI profile took only the Bearer token "test-token", which nothing said:
// a user's first call with their own token got 401.
TEST(Mock, WorkersAiTakesAnyBearerTokenByDefault) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  EXPECT_EQ(workers_post(server, "Bearer cf-user-token-1234").status, 200);
  EXPECT_EQ(workers_post(server, "Bearer x").status, 200);
  auto decision = clef::Client::create(workers_options(server, "whatever-the-user-has"))
                      .value()
                      .decide(ticket("charged twice"));
  EXPECT_TRUE(decision) << decision.error().to_string();
  // No token at all is still Workers AI's 401, as are a blank one and another scheme.
  EXPECT_TRUE(is_workers_401(workers_post(server, "")));
  EXPECT_TRUE(is_workers_401(workers_post(server, "Bearer ")));
  EXPECT_TRUE(is_workers_401(workers_post(server, "Bearer   ")));
  EXPECT_TRUE(is_workers_401(workers_post(server, "Basic dXNlcjpwYXNz")));
  EXPECT_EQ(server.request_count(), 7);
}

TEST(Mock, SetTokenRefusesEveryOtherToken) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  const clef::Status set = server.set_token("s3cret");
  ASSERT_TRUE(set) << set.error().to_string();
  EXPECT_TRUE(is_workers_401(workers_post(server, "Bearer other")));
  EXPECT_TRUE(is_workers_401(workers_post(server, "")));
  EXPECT_EQ(workers_post(server, "Bearer s3cret").status, 200);
  auto refused = clef::Client::create(workers_options(server, "other")).value().decide(ticket("x"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, clef::ErrorKind::authentication);
  EXPECT_EQ(refused.error().server_code, "10000");
  EXPECT_TRUE(clef::Client::create(workers_options(server, "s3cret")).value().decide(ticket("x")));
  // nullopt: any token again.
  ASSERT_TRUE(server.set_token(std::nullopt));
  EXPECT_EQ(workers_post(server, "Bearer other").status, 200);
}

TEST(Mock, OnlyWorkersAiTakesAToken) {
  clef::MockServer ollama;
  const clef::Status on_ollama = ollama.set_token("s3cret");
  ASSERT_FALSE(on_ollama);
  EXPECT_EQ(on_ollama.error().kind, clef::ErrorKind::invalid_input);
  EXPECT_EQ(on_ollama.error().where, "token");
  EXPECT_NE(on_ollama.error().message.find("Workers AI"), std::string::npos)
      << on_ollama.error().message;
  EXPECT_TRUE(ollama.set_token(std::nullopt)) << "no token is every profile's default";
  EXPECT_TRUE(client_for(ollama).decide(ticket("x")));

  clef::MockServer workers(clef::MockProfile::workers_ai);
  for (const char* blank : {"", "  "}) {
    const clef::Status refused = workers.set_token(std::string(blank));
    ASSERT_FALSE(refused) << "token \"" << blank << "\"";
    EXPECT_EQ(refused.error().kind, clef::ErrorKind::invalid_input);
  }
  EXPECT_EQ(workers_post(workers, "Bearer any").status, 200) << "a refused token changes nothing";
}

// Issue 18: MockServer(profile, port) threw; start() returns the server or why not, and the
// server it returns moves like any value.
TEST(Mock, StartReturnsAServerOrWhyNot) {
  for (int port : {-1, 65536, 70000}) {
    auto refused = clef::MockServer::start(clef::MockProfile::ollama, port);
    ASSERT_FALSE(refused) << port << " became " << refused->base_url();
    EXPECT_EQ(refused.error().kind, clef::ErrorKind::invalid_input);
    EXPECT_NE(refused.error().message.find("from 0 to 65535"), std::string::npos)
        << refused.error().message;
  }

  auto started = clef::MockServer::start(clef::MockProfile::workers_ai);
  ASSERT_TRUE(started) << started.error().to_string();
  EXPECT_GT(started->port(), 0);
  clef::MockServer moved = std::move(started).value();
  EXPECT_EQ(workers_post(moved, "Bearer t").status, 200) << "it serves once moved";

  clef::MockServer replaced;
  const clef::ClientOptions replaced_options = [&] {
    clef::ClientOptions options;
    options.base_url = replaced.base_url();
    options.retry.max_attempts = 1;
    return options;
  }();
  const std::string moved_url = moved.base_url();
  replaced = std::move(moved);  // the server `replaced` held stops
  EXPECT_EQ(replaced.base_url(), moved_url);
  EXPECT_EQ(workers_post(replaced, "Bearer t").status, 200) << "still the Workers AI profile";
  EXPECT_EQ(replaced.request_count(), 2) << "the count travels with the server";
  auto stopped = clef::Client::create(replaced_options).value().decide(ticket("x"));
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().kind, clef::ErrorKind::connection_failed)
      << stopped.error().to_string();
}

/// Constructs a MockServer in a process with no file descriptor left to open.
void construct_without_descriptors() {
  rlimit no_files{};
  ::setrlimit(RLIMIT_NOFILE, &no_files);
  clef::MockServer server;
}

// The constructor cannot return an error: when no port can be taken (here, no descriptor is
// left) it says why on stderr, pointing at start(), and aborts rather than throw.
// GCC says ASan is on with __SANITIZE_ADDRESS__, clang 14 only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define CLEF_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLEF_TEST_UNDER_ASAN 1
#endif
#endif

TEST(MockDeathTest, TheConstructorSaysWhyAndAbortsWhenNoPortCanBeTaken) {
#ifdef CLEF_TEST_UNDER_ASAN  // CLEF_SANITIZE: ASan with UBSan
  GTEST_SKIP() << "UBSan checks each vptr through a pipe, which a process with no descriptor "
                  "left cannot open: it reports an invalid vptr before the mock can say why";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the process runs other tests' threads
  EXPECT_DEATH(construct_without_descriptors(),
               "clef::MockServer: cannot open a socket: Too many open files \\(MockServer::start "
               "reports this instead\\)");
}

}  // namespace
