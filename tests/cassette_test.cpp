// Recording and replay transports as an application's tests use them: record against a server
// once, then decide from the cassette with no server and no network.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <sstream>

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
  EXPECT_DOUBLE_EQ(replayed->answers[0].yes_no()->p_true, 0.9989);
  auto miss = client->decide(ticket("something else"));
  ASSERT_FALSE(miss);
  EXPECT_EQ(miss.error().kind, clef::ErrorKind::not_recorded);
  EXPECT_FALSE(miss.error().retryable());
}

TEST(Cassette, TheLaterRecordingOfARequestWins) {
  // README: "a retry's success replaces the 503 before it".
  const std::string path = ::testing::TempDir() + "later_wins.cassette.jsonl";
  std::remove(path.c_str());
  {
    clef::testing::FakeServer server;
    server.set_script([](const clef::MockRequest&, int call) -> std::optional<clef::MockReply> {
      if (call == 0)
        return clef::MockReply{
            503, R"({"error":"busy"})", "application/json", {{"Retry-After", "0"}}};
      return std::nullopt;
    });
    auto recording = clef::make_recording_transport(clef::make_curl_transport(), path, "ollama");
    ASSERT_TRUE(recording);
    auto client = client_over(recording.value(), server.base_url());
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->decide(ticket("charged twice")));  // a 503, then its retry's 200
    ASSERT_EQ(server.request_count(), 2);
  }
  std::ifstream lines(path);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_NE(first.find("\"status\":503"), std::string::npos) << first;
  EXPECT_NE(second.find("\"status\":200"), std::string::npos) << second;
  auto replay = clef::make_replay_transport(path, "ollama");
  ASSERT_TRUE(replay);
  auto client = client_over(replay.value(), "http://127.0.0.1:1");
  auto replayed = client->decide(ticket("charged twice"));
  EXPECT_TRUE(replayed) << replayed.error().to_string();
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

/// Answers every request with `body` and `headers`, counting what reaches it.
class Canned final : public clef::Transport {
 public:
  clef::Result<clef::HttpResponse> send(const clef::HttpRequest&) override {
    ++sent;
    clef::HttpResponse response;
    response.status = 200;
    response.headers = headers;
    response.body = body;
    return response;
  }
  std::string body = "{}";
  clef::Headers headers;
  std::atomic<int> sent{0};
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

clef::HttpRequest posted(const std::string& body) {
  clef::HttpRequest request;
  request.url = "http://127.0.0.1:1/v1/systemone";
  request.body = body;
  return request;
}

// Issue 15, item 13: every credential the request carried is scrubbed from what the server
// echoed before the line is written, and a new cassette is 0600.
TEST(Cassette, CredentialsTheServerEchoesAreScrubbed) {
  const std::string path = ::testing::TempDir() + "scrubbed.cassette.jsonl";
  std::remove(path.c_str());
  auto server = std::make_shared<Canned>();
  server->body = R"({"note":"bearer tok-AAAA1111, key key-BBBB2222, password pw-CCCC3333"})";
  server->headers = {{"x-request-id", "tok-AAAA1111"}, {"content-type", "application/json"}};
  auto recording = clef::make_recording_transport(server, path, "systemone");
  ASSERT_TRUE(recording) << recording.error().to_string();
  clef::HttpRequest request = posted(R"({"state":"x"})");
  request.url = "http://alice:pw-CCCC3333@127.0.0.1:1/v1/systemone";
  request.headers = {{"Authorization", "Bearer tok-AAAA1111"}, {"X-Api-Key", "key-BBBB2222"}};
  ASSERT_TRUE(recording.value()->send(request));
  const std::string text = slurp(path);
  for (const char* secret : {"tok-AAAA1111", "key-BBBB2222", "pw-CCCC3333"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << text;
  }
  EXPECT_NE(text.find("<redacted>"), std::string::npos) << text;
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

// Issue 15, item 15: once a line cannot be written, nothing more is sent.
TEST(Cassette, ARecordingThatCannotBeWrittenStopsSending) {
  auto server = std::make_shared<Canned>();
  auto recording = clef::make_recording_transport(server, "/dev/full", "ollama");
  ASSERT_TRUE(recording) << recording.error().to_string();
  EXPECT_FALSE(recording.value()->failure());
  auto first = recording.value()->send(posted("{}"));
  ASSERT_TRUE(first) << "the answer that arrived is kept";
  ASSERT_TRUE(recording.value()->failure());
  EXPECT_NE(recording.value()->failure()->message.find("No space left"), std::string::npos);
  auto second = recording.value()->send(posted("{}"));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, clef::ErrorKind::cancelled);
  EXPECT_EQ(server->sent.load(), 1) << "sent after the cassette failed";
}

// After a cassette was cut short (a full disk), recording into it again mends its last line
// first: a torn line is cut off, a whole one missing its newline gets it. The cassette then
// replays whole, instead of being refused for a bad line in its middle.
TEST(Cassette, RecordingAgainAfterATornLineLeavesACassetteThatReplays) {
  const std::string good = R"({"key":")" + clef::exchange_key("ollama", posted("{}")) +
                           R"(","status":200,"headers":[],"body":"{\"ok\":1}"})";
  const std::string other = R"({"key":")" + clef::exchange_key("ollama", posted("{\"n\":2}")) +
                            R"(","status":200,"headers":[],"body":"{\"ok\":2}"})";
  for (const bool torn : {true, false}) {
    const std::string path =
        ::testing::TempDir() + (torn ? "mend_torn" : "mend_whole") + ".cassette.jsonl";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << good << "\n"
                                                            << (torn ? other.substr(0, 30) : other);
    auto server = std::make_shared<Canned>();
    auto recording = clef::make_recording_transport(server, path, "ollama");
    ASSERT_TRUE(recording) << recording.error().to_string();
    ASSERT_TRUE(recording.value()->send(posted("{\"n\":3}")));
    recording = clef::make_recording_transport(server, "/dev/null", "ollama");  // closes the file
    auto replay = clef::make_replay_transport(path, "ollama");
    ASSERT_TRUE(replay) << (torn ? "torn: " : "whole: ") << replay.error().to_string();
    EXPECT_TRUE(replay.value()->warnings().empty());
    EXPECT_TRUE(replay.value()->send(posted("{}")));
    EXPECT_TRUE(replay.value()->send(posted("{\"n\":3}")));
    EXPECT_EQ(replay.value()->send(posted("{\"n\":2}")).ok(), !torn)
        << "a whole last line is kept, a torn one is not";
  }
}

// Issue 15, item 15: a torn last line is skipped with a warning; a bad line elsewhere, or a status
// that is not one, refuses the cassette.
TEST(Cassette, ATornLastLineIsSkippedAndStatusesAreRangeChecked) {
  const std::string good = R"({"key":")" + clef::exchange_key("ollama", posted("{}")) +
                           R"(","status":200,"headers":[],"body":"{\"ok\":1}"})";
  auto replay_of = [](const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return clef::make_replay_transport(path, "ollama");
  };
  auto torn = replay_of("torn.cassette.jsonl", good + "\n" + good.substr(0, 25));
  ASSERT_TRUE(torn) << torn.error().to_string();
  ASSERT_EQ(torn.value()->warnings().size(), 1u);
  EXPECT_NE(torn.value()->warnings()[0].find("line 2"), std::string::npos);
  EXPECT_TRUE(torn.value()->send(posted("{}")));
  auto whole_last = replay_of("whole_last.cassette.jsonl", good);  // no newline, but whole
  ASSERT_TRUE(whole_last);
  EXPECT_TRUE(whole_last.value()->warnings().empty());
  EXPECT_TRUE(whole_last.value()->send(posted("{}")));
  auto middle = replay_of("middle.cassette.jsonl", good.substr(0, 25) + "\n" + good + "\n");
  ASSERT_FALSE(middle);
  EXPECT_NE(middle.error().where.find("line 1"), std::string::npos);
  for (const std::string status : {"99999999999", "-1", "99", "600", "18446744073709551615"}) {
    std::string line = good;
    line.replace(line.find("200"), 3, status);
    auto bad = replay_of("status.cassette.jsonl", line + "\n");
    ASSERT_FALSE(bad) << status;
    EXPECT_NE(bad.error().message.find("is not an HTTP status"), std::string::npos)
        << bad.error().message;
  }
}

}  // namespace
