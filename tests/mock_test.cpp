// clef::MockServer as an application's tests use it: faults on demand, a request log, answers
// from rules and from a cassette.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "clef/cassette.hpp"
#include "clef/client.hpp"
#include "clef/mock.hpp"

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
  EXPECT_DOUBLE_EQ(client.decide(ticket("please refund"))->answers[0].noul()->p_true, 0.8);
  EXPECT_DOUBLE_EQ(client.decide(ticket("from the cassette"))->answers[0].noul()->p_true, 0.123);
  auto fallback = client.decide(ticket("anything else"));
  ASSERT_TRUE(fallback);
  EXPECT_EQ(client.decide(ticket("anything else"))->answers[0].noul()->p_true,
            fallback->answers[0].noul()->p_true)
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

}  // namespace
