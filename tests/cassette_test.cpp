// Recording and replay transports as an application's tests use them: record against a server
// once, then decide from the cassette with no server and no network.
#include <gtest/gtest.h>

#include "clef/cassette.hpp"
#include "clef/client.hpp"
#include "fake_server.hpp"

namespace {

clef::DecisionRequest ticket(const std::string& text) {
  clef::DecisionRequest request;
  request.state = clef::State::text(text);
  request.questions = {clef::Question::yes_no("refund", "Does the customer want money back?")};
  return request;
}

clef::Result<clef::Client> client_over(std::shared_ptr<clef::Transport> transport,
                                       const std::string& base_url) {
  clef::ClientOptions options;
  options.base_url = base_url;
  options.transport = std::move(transport);
  return clef::Client::create(options);
}

TEST(Cassette, RecordedDecisionsReplayWithNoServer) {
  const std::string path = ::testing::TempDir() + "library.cassette.jsonl";
  std::remove(path.c_str());
  clef::Decision live;
  {
    clef::testing::FakeServer server;
    auto recording = clef::make_recording_transport(clef::make_curl_transport(), path, "ollama");
    ASSERT_TRUE(recording) << recording.error().to_string();
    auto client = client_over(recording.value(), server.base_url());
    ASSERT_TRUE(client);
    auto decision = client->decide(ticket("I was charged twice. Please refund the extra payment."));
    ASSERT_TRUE(decision) << decision.error().to_string();
    live = decision.value();
  }  // the server is gone
  auto replay = clef::make_replay_transport(path, "ollama");
  ASSERT_TRUE(replay) << replay.error().to_string();
  auto client = client_over(replay.value(), "http://127.0.0.1:1");
  ASSERT_TRUE(client);
  auto replayed = client->decide(ticket("I was charged twice. Please refund the extra payment."));
  ASSERT_TRUE(replayed) << replayed.error().to_string();
  EXPECT_EQ(replayed->raw_json, live.raw_json);
  EXPECT_DOUBLE_EQ(replayed->answers[0].noul()->p_true, 0.9989);
  auto miss = client->decide(ticket("something else"));
  ASSERT_FALSE(miss);
  EXPECT_EQ(miss.error().kind, clef::ErrorKind::not_recorded);
  EXPECT_FALSE(miss.error().retryable());
}

TEST(Cassette, KeyIgnoresHostAndHeadersButNotPathOrBody) {
  clef::HttpRequest a;
  a.url = "http://127.0.0.1:1111/v1/systemone";
  a.body = R"({"model":"clef-flash","state":"x"})";
  clef::HttpRequest b = a;
  b.url = "http://localhost:2222/v1/systemone";
  b.headers = {{"Authorization", "Bearer secret"}};
  EXPECT_EQ(clef::exchange_key("ollama", a), clef::exchange_key("ollama", b));
  clef::HttpRequest c = a;
  c.body = R"({"model":"clef","state":"x"})";
  EXPECT_NE(clef::exchange_key("ollama", a), clef::exchange_key("ollama", c));
  EXPECT_NE(clef::exchange_key("ollama", a), clef::exchange_key("systemone", a));
  clef::HttpRequest d = a;
  d.url = "http://127.0.0.1:1111/client/v4/accounts/a/ai/run/@cf/cloudflare/clef";
  EXPECT_NE(clef::exchange_key("ollama", a), clef::exchange_key("ollama", d));
}

}  // namespace
