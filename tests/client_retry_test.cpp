// Retries and client behaviour through an injected transport and a fake clock.
#include <gtest/gtest.h>

#include <deque>
#include <mutex>

#include "clef/clef.hpp"
#include "http_response.hpp"

namespace {

using clef::testing::http_response;

using clef::ErrorKind;
using namespace std::chrono_literals;

const char* ok_body =
    R"({"model":"clef-flash","answers":{"u":{"type":"noul","noul":0.9}},"usage":{"input_tokens":3,"output_tokens":0}})";

class ScriptedTransport : public clef::Transport {
 public:
  std::deque<clef::Result<clef::HttpResponse>> replies;
  std::vector<clef::HttpRequest> sent;
  clef::Result<clef::HttpResponse> send(const clef::HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(m_mutex);
    sent.push_back(request);
    if (replies.empty()) return clef::make_error(ErrorKind::connection_failed, "script ran out");
    auto reply = replies.front();
    replies.pop_front();
    return reply;
  }

 private:
  std::mutex m_mutex;
};

struct Fixture {
  std::shared_ptr<ScriptedTransport> transport = std::make_shared<ScriptedTransport>();
  std::vector<std::chrono::milliseconds> waits;
  clef::ClientOptions options;
  clef::DecisionRequest request;
  Fixture() {
    options.base_url = "http://127.0.0.1:1";
    options.transport = transport;
    options.sleep = [this](std::chrono::milliseconds d) { waits.push_back(d); };
    request.state = clef::State::text("x");
    request.questions = {clef::Question::yes_no("u", "Urgent?")};
  }
  clef::Result<clef::Decision> decide() {
    return clef::Client::create(options).value().decide(request);
  }
};

TEST(Retry, RetriesServerErrorsThenSucceeds) {
  Fixture f;
  f.transport->replies = {http_response(503, R"({"error":"busy"})"), http_response(500, "{}"),
                          http_response(200, ok_body)};
  auto d = f.decide();
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(f.transport->sent.size(), 3u);
  ASSERT_EQ(f.waits.size(), 2u);
  EXPECT_GE(f.waits[0], 250ms);  // jittered in [backoff/2, backoff]
  EXPECT_LE(f.waits[0], 500ms);
  EXPECT_GE(f.waits[1], 500ms);
  EXPECT_LE(f.waits[1], 1000ms);
}

TEST(Retry, BackoffDoublesUpToTheCapWithoutJitter) {
  Fixture f;
  f.options.retry = {6, 100ms, 350ms, 60s, false};
  for (int i = 0; i < 6; ++i)
    f.transport->replies.push_back(clef::make_error(ErrorKind::timeout, "slow"));
  auto d = f.decide();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::timeout);
  EXPECT_NE(d.error().message.find("after 6 attempts"), std::string::npos);
  EXPECT_EQ(f.waits, (std::vector<std::chrono::milliseconds>{100ms, 200ms, 350ms, 350ms, 350ms}));
}

TEST(Retry, HonoursRetryAfterMsThenRetryAfter) {
  Fixture f;
  f.transport->replies = {
      http_response(429, "{}", {{"retry-after-ms", "1234"}, {"retry-after", "9"}}),
      http_response(529, "{}", {{"retry-after", "2"}}), http_response(200, ok_body)};
  ASSERT_TRUE(f.decide().ok());
  EXPECT_EQ(f.waits, (std::vector<std::chrono::milliseconds>{1234ms, 2000ms}));
}

TEST(Retry, ARetryAfterPastADayIsNotShownAsTheOneDayCap) {
  // Retry-After is read saturated at one day; the message must not claim the server asked for
  // exactly 86400000 ms when it asked for 9e9 s (issue 15, item 22).
  Fixture f;
  f.transport->replies = {http_response(429, "{}", {{"retry-after", "9000000000"}})};
  auto d = f.decide();
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("the server asked to wait a day or more"), std::string::npos)
      << d.error().message;
  EXPECT_EQ(d.error().message.find("86400000"), std::string::npos) << d.error().message;
  Fixture hour;
  hour.transport->replies = {http_response(429, "{}", {{"retry-after", "3600"}})};
  auto h = hour.decide();
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("asked to wait 3600000 ms"), std::string::npos)
      << h.error().message;
}

TEST(Client, CredentialsInTheBaseUrlAreBasicAuthAndNeverInTheUrl) {
  // Issue 15, item 16: basic auth in front of a remote Ollama.
  Fixture f;
  f.options.base_url = "http://alice:S3cret%40PW@127.0.0.1:1";
  f.transport->replies = {http_response(404, R"({"error":"S3cret@PW is wrong"})")};
  auto d = f.decide();
  ASSERT_FALSE(d.ok());
  ASSERT_EQ(f.transport->sent.size(), 1u);
  const clef::HttpRequest& sent = f.transport->sent[0];
  EXPECT_EQ(sent.url, "http://127.0.0.1:1/v1/systemone");
  bool basic = false;
  for (const auto& [name, value] : sent.headers)
    basic |= name == "Authorization" && value == "Basic YWxpY2U6UzNjcmV0QFBX";  // alice:S3cret@PW
  EXPECT_TRUE(basic);
  EXPECT_EQ(d.error().to_string().find("S3cret"), std::string::npos) << d.error().to_string();
  auto client = clef::Client::create(f.options).value();
  for (const auto& [name, value] : client.redacted_headers()) {
    if (name == "Authorization") {
      EXPECT_EQ(value, "Basic <redacted>");
    }
  }
  EXPECT_EQ(client.endpoint(f.request).find("alice"), std::string::npos);

  f.options.api_token = "tok";  // two credentials for one header: refused, the URL not shown
  auto both = clef::Client::create(f.options);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().to_string().find("S3cret"), std::string::npos);
  f.options.api_token.clear();
  f.options.base_url = "ftp://alice:S3cretPW@host";  // refused without echoing the password
  auto scheme = clef::Client::create(f.options);
  ASSERT_FALSE(scheme.ok());
  EXPECT_EQ(scheme.error().to_string().find("S3cretPW"), std::string::npos)
      << scheme.error().to_string();
}

TEST(Credentials, AnOfflineWorkersAiClientNeedsNoToken) {
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.account_id = "acc9";
  auto live = clef::Client::create(options);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.error().kind, ErrorKind::authentication);
  EXPECT_NE(live.error().message.find("CLOUDFLARE_API_TOKEN"), std::string::npos);

  options.offline = true;  // a dry run or a replay: what it builds is the same, minus the token
  auto offline = clef::Client::create(options);
  ASSERT_TRUE(offline.ok()) << offline.error().to_string();
  clef::DecisionRequest request;
  request.state = clef::State::text("refund please");
  request.questions.push_back(clef::Question::yes_no("refund", "Asks for a refund?"));
  EXPECT_TRUE(offline->request_body(request).ok());
  EXPECT_EQ(offline->endpoint(request),
            "https://api.cloudflare.com/client/v4/accounts/acc9/ai/run/@cf/cloudflare/clef-flash");
  for (const auto& [name, value] : offline->redacted_headers()) EXPECT_NE(name, "Authorization");
  options.account_id.clear();  // every other check still holds
  EXPECT_FALSE(clef::Client::create(options).ok());
}

TEST(Retry, NeverRetriesWhatRetryingCannotFix) {
  for (int status : {400, 401, 403, 404, 413, 422, 501}) {
    Fixture f;
    f.transport->replies = {http_response(status, R"({"error":"no"})"),
                            http_response(200, ok_body)};
    auto d = f.decide();
    ASSERT_FALSE(d.ok()) << status;
    EXPECT_EQ(f.transport->sent.size(), 1u) << status;
    EXPECT_TRUE(f.waits.empty());
  }
  Fixture quota;
  quota.options.backend = clef::Backend::workers_ai;
  quota.options.account_id = "abc123";
  quota.options.api_token = "tok";
  quota.transport->replies = {http_response(
      429,
      R"({"result":null,"success":false,"errors":[{"code":4006,"message":"daily"}],"messages":[]})")};
  EXPECT_EQ(quota.decide().error().kind, ErrorKind::quota_exhausted);
  EXPECT_EQ(quota.transport->sent.size(), 1u);
}

TEST(Retry, InvalidResponsesAreNotRetried) {
  Fixture f;
  f.transport->replies = {http_response(200, R"({"answers": )"), http_response(200, ok_body)};
  auto d = f.decide();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::invalid_response);
  EXPECT_EQ(d.error().where, "byte 12");
  EXPECT_EQ(f.transport->sent.size(), 1u);
}

TEST(Retry, StopsWhenTheNextWaitWouldPassTheBudget) {
  Fixture f;
  f.options.retry.total_budget = 1s;
  f.transport->replies = {http_response(503, "{}", {{"retry-after", "5"}}),
                          http_response(200, ok_body)};
  auto d = f.decide();
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("retry budget"), std::string::npos);
  EXPECT_EQ(f.transport->sent.size(), 1u);
}

TEST(Retry, OneAttemptMeansNoRetry) {
  Fixture f;
  f.options.retry.max_attempts = 1;
  f.transport->replies = {http_response(503, "{}"), http_response(200, ok_body)};
  EXPECT_EQ(f.decide().error().kind, ErrorKind::server_error);
  EXPECT_EQ(f.transport->sent.size(), 1u);
}

TEST(Client, SendsHeadersAndTheWorkersUrlAndNeverLeaksTheToken) {
  Fixture f;
  f.options.backend = clef::Backend::workers_ai;
  f.options.account_id = "acc1";
  f.options.api_token = "s3cr3t-token";
  f.options.base_url = "http://127.0.0.1:9/client/v4";
  f.transport->replies = {http_response(
      400,
      R"({"errors":[{"code":5006,"message":"bad token s3cr3t-token"}],"success":false,"result":{},"messages":[]})")};
  auto client = clef::Client::create(f.options).value();
  auto d = client.decide(f.request);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().to_string().find("s3cr3t-token"), std::string::npos) << d.error().to_string();
  const auto& sent = f.transport->sent.at(0);
  EXPECT_EQ(sent.url,
            "http://127.0.0.1:9/client/v4/accounts/acc1/ai/run/@cf/cloudflare/clef-flash");
  EXPECT_NE(sent.body.find(R"("model":"clef-flash")"), std::string::npos);
  bool auth = false;
  for (const auto& [k, v] : sent.headers)
    auth |= (k == "Authorization" && v == "Bearer s3cr3t-token");
  EXPECT_TRUE(auth);
  for (const auto& [k, v] : client.redacted_headers())
    EXPECT_EQ(v.find("s3cr3t"), std::string::npos);
}

TEST(Client, WorkersModelNamesBareInBodyFullInPath) {
  Fixture f;
  f.options.backend = clef::Backend::workers_ai;
  f.options.account_id = "acc1";
  f.options.api_token = "t";
  f.options.model = "@cf/cloudflare/clef";
  f.options.base_url.clear();
  auto client = clef::Client::create(f.options).value();
  EXPECT_EQ(client.endpoint(f.request),
            "https://api.cloudflare.com/client/v4/accounts/acc1/ai/run/@cf/cloudflare/clef");
  EXPECT_EQ(client.request_body(f.request).value().rfind(R"({"model":"clef",)", 0), 0u);
}

TEST(Client, CreateChecksOptions) {
  clef::ClientOptions workers;
  workers.backend = clef::Backend::workers_ai;
  EXPECT_NE(clef::Client::create(workers).error().message.find("CLOUDFLARE_ACCOUNT_ID"),
            std::string::npos);
  workers.account_id = "abc";
  EXPECT_EQ(clef::Client::create(workers).error().kind, ErrorKind::authentication);
  workers.api_token = "tok\n";
  EXPECT_NE(clef::Client::create(workers).error().message.find("line break"), std::string::npos);
  // Spaces around it: a server echoing the bare token would not be redacted.
  workers.api_token = " tok ";
  EXPECT_NE(clef::Client::create(workers).error().message.find("white space"), std::string::npos);
  clef::ClientOptions generic;
  generic.backend = clef::Backend::systemone;
  EXPECT_EQ(clef::Client::create(generic).error().where, "base_url");
  generic.base_url = "ftp://x";
  EXPECT_EQ(clef::Client::create(generic).error().where, "base_url");
}

TEST(Client, CancelledBeforeSending) {
  Fixture f;
  std::atomic<bool> cancel{true};
  f.options.cancel = &cancel;
  EXPECT_EQ(f.decide().error().kind, ErrorKind::cancelled);
  EXPECT_TRUE(f.transport->sent.empty());
}

TEST(Client, SendsItsOneVersionAsTheUserAgent) {
  Fixture f;
  f.transport->replies = {http_response(200, ok_body)};
  ASSERT_TRUE(f.decide().ok());
  std::string agent;
  for (const auto& [name, value] : f.transport->sent.at(0).headers)
    if (name == "User-Agent") agent = value;
  EXPECT_EQ(agent, std::string("clef/") + clef::version);
  EXPECT_EQ(std::string(clef::version), "0.1.0");  // the CMake project version is read from it
}

}  // namespace
