// Issue 7: what a hostile or broken server (or file) sends can crash, hang, stall or leak
// nothing. Each case asserts the specific error, not just "not ok".
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "clef/clef.hpp"
#include "fake_server.hpp"
#include "http_response.hpp"
#include "silent_listener.hpp"
#include "util/redact.hpp"
#include "wire/http_errors.hpp"
#include "wire/wire_response.hpp"

namespace {

using clef::testing::http_response;

using clef::ErrorKind;
using clef::testing::FakeServer;
using clef::testing::Scripted;
using namespace std::chrono_literals;

/// A transport that answers every request with the same response.
class FixedTransport : public clef::Transport {
 public:
  explicit FixedTransport(clef::HttpResponse response) : m_response(std::move(response)) {}
  clef::Result<clef::HttpResponse> send(const clef::HttpRequest&) override {
    ++sent;
    return m_response;
  }
  std::atomic<int> sent{0};

 private:
  clef::HttpResponse m_response;
};

struct Rig {
  std::shared_ptr<FixedTransport> transport;
  clef::ClientOptions options;
  clef::DecisionRequest request;
  explicit Rig(clef::HttpResponse reply, clef::Backend backend = clef::Backend::systemone) {
    transport = std::make_shared<FixedTransport>(std::move(reply));
    options.backend = backend;
    options.base_url = "http://127.0.0.1:1";
    options.account_id = "abc123";
    options.api_token = "tok";
    options.transport = transport;
    options.sleep = [](std::chrono::milliseconds) {};
    request.state = clef::State::text("x");
    request.questions = {clef::Question::yes_no("u", "Urgent?")};
  }
  clef::Result<clef::Decision> decide() {
    return clef::Client::create(options).value().decide(request);
  }
};

TEST(HostileJson, AnOllamaListingOfTheWrongShapeIsNotAnEmptyOne) {
  // `clef models` showed an empty table, and doctor "not a decision model", for these.
  for (const char* tags : {"{}", R"({"models":"x"})", R"({"models":{}})"}) {
    Rig s(http_response(200, tags), clef::Backend::ollama);
    auto models = clef::OllamaApi::create(s.options).value().models();
    ASSERT_FALSE(models) << tags;
    EXPECT_EQ(models.error().kind, ErrorKind::invalid_response) << tags;
    EXPECT_NE(models.error().message.find("no \"models\" list"), std::string::npos) << tags;
  }
  Rig empty(http_response(200, R"({"models":[]})"), clef::Backend::ollama);
  auto none = clef::OllamaApi::create(empty.options).value().models();
  ASSERT_TRUE(none) << none.error().to_string();
  EXPECT_TRUE(none->empty());
  Rig text(http_response(200, R"({"capabilities":"decision"})"), clef::Backend::ollama);
  auto shown = clef::OllamaApi::create(text.options).value().show("clef-flash");
  ASSERT_FALSE(shown);
  EXPECT_EQ(shown.error().kind, ErrorKind::invalid_response);
  Rig old(http_response(200, R"({"details":{"format":"gguf"}})"), clef::Backend::ollama);
  auto older = clef::OllamaApi::create(old.options).value().show("clef-flash");
  ASSERT_TRUE(older) << "an older Ollama says nothing of capabilities";
  EXPECT_FALSE(older->can_decide());
}

TEST(HostileJson, ARedirectSaysWhereItLeadsAndIsNotFollowed) {
  // It said only "unexpected HTTP status 307".
  Rig s(http_response(307, "", {{"Location", "http://elsewhere.example/v1/systemone"}}));
  auto decision = s.decide();
  ASSERT_FALSE(decision);
  EXPECT_NE(decision.error().message.find(
                "redirects (HTTP 307) to http://elsewhere.example/v1/systemone, and clef follows "
                "no redirect"),
            std::string::npos)
      << decision.error().to_string();
  EXPECT_EQ(decision.error().http_status, 307);
  // A Location that carries the token is redacted like any other echo of it.
  Rig echo(http_response(302, "", {{"Location", "http://x.example/?key=tok"}}));
  auto echoed = echo.decide();
  ASSERT_FALSE(echoed);
  EXPECT_EQ(echoed.error().to_string().find("key=tok"), std::string::npos)
      << echoed.error().to_string();
}

TEST(HostileJson, NumberOutOfDoubleRangeIsAnErrorWithItsByte) {
  Rig s(http_response(200, R"({"answers":{"u":{"type":"noul","noul":1e400}}})"));
  auto d = s.decide();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::invalid_response);
  EXPECT_NE(d.error().message.find("outside the range of a double"), std::string::npos);
  EXPECT_EQ(d.error().where, "byte 38");  // the first digit of 1e400
  EXPECT_EQ(d.error().http_status, 200);
}

TEST(HostileJson, DeepNestingInAnAnswerIsRefusedNotRecursed) {
  const std::string deep(100'000, '[');
  Rig s(http_response(200, R"({"answers":{"u":{"type":"noul","noul":)" + deep + "}}}"));
  auto d = s.decide();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::invalid_response);
  EXPECT_NE(d.error().message.find("nests deeper than 256 levels"), std::string::npos);
  // Three levels open before the array; the 254th "[" (at 38 + 253) opens level 257.
  EXPECT_EQ(d.error().where, "byte 291");
}

TEST(HostileJson, StateAndExtraFieldsFromCallersAreBoundedToo) {
  auto big = clef::State::json(R"({"a":1e400})");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(big.error().where.find("byte 5"), std::string::npos);
  auto deep = clef::State::json(std::string(100'000, '['));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("nests deeper"), std::string::npos);
  auto ok = clef::parse_json(std::string(256, '[') + std::string(256, ']'), "x");
  EXPECT_TRUE(ok.ok());  // exactly the bound is fine
}

TEST(HostileJson, RawJsonIsTheBytesAsSentNotADump) {
  const std::string answer = R"({ "type" : "noul", "noul" : 0.90 })";
  Rig s(http_response(200, R"({"model":"m","answers":{"u":)" + answer + "}}"));
  auto d = s.decide();
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d->answers[0].raw_json, answer);
}

TEST(HostileErrorBody, NonStringMessagesNeverThrow) {
  struct Case {
    clef::Backend backend;
    int status;
    std::string body;
    ErrorKind kind;
  };
  const std::vector<Case> cases = {
      {clef::Backend::systemone, 500, R"({"error":{"message":5}})", ErrorKind::server_error},
      {clef::Backend::systemone, 422, R"({"detail":[{"msg":{}}]})", ErrorKind::request_rejected},
      {clef::Backend::systemone, 422, R"({"detail":{"message":[1]}})", ErrorKind::request_rejected},
      {clef::Backend::workers_ai, 400, R"({"success":false,"errors":[{"message":7}]})",
       ErrorKind::request_rejected},
      {clef::Backend::workers_ai, 429, R"({"success":false,"errors":[{"code":{},"message":null}]})",
       ErrorKind::rate_limited},
      {clef::Backend::ollama, 400, R"({"error":1e400})", ErrorKind::request_rejected},
  };
  for (const auto& c : cases) {
    const clef::Error e =
        clef::detail::error_from_response(c.backend, http_response(c.status, c.body), "clef-flash");
    EXPECT_EQ(e.kind, c.kind) << c.body;
    EXPECT_EQ(e.http_status, c.status) << c.body;
  }
  // A success:false envelope inside a 200 with a non-string message.
  Rig s(
      http_response(200, R"({"success":false,"errors":[{"message":7,"code":4006}],"result":null})"),
      clef::Backend::workers_ai);
  auto d = s.decide();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::quota_exhausted);
}

TEST(Redaction, TerminatesForTokensThePlaceholderContains) {
  using clef::detail::redact;
  EXPECT_EQ(redact("hello", "e"), "h<redacted>llo");
  EXPECT_EQ(redact("a<b<", "<"), "a<redacted>b<redacted>");
  EXPECT_EQ(redact("redacted red", "red"), "<redacted>acted <redacted>");
  EXPECT_EQ(redact("<redacted>", "<redacted>"), "<redacted>");
  const std::string token(40, 'k');
  std::string repeated;
  for (int i = 0; i < 1000; ++i) repeated += token;
  EXPECT_EQ(redact(repeated, token).size(), 1000 * std::string("<redacted>").size());
  EXPECT_EQ(redact("abc", ""), "abc");
}

TEST(Redaction, AnEchoingServerNeverGetsTheTokenOut) {
  const std::string token = "sk-live-0123456789abcdefghijklmnopqrstuv";  // 40 characters
  ASSERT_EQ(token.size(), 40u);
  FakeServer server;
  server.set_script([&](const clef::testing::RecordedRequest& r,
                        int call) -> std::optional<Scripted> {
    const std::string auth = r.header("Authorization");  // "Bearer <token>"
    const std::string echoed = auth.substr(7);
    std::vector<std::pair<std::string, std::string>> headers = {{"X-Request-Id", auth}};
    if (call == 0) {  // JSON error: the token in message, code, request id
      return Scripted{
          400, R"({"error":{"message":"bad key )" + echoed + R"(","code":")" + echoed + R"("}})",
          "application/json", headers};
    }
    if (call == 1) {  // plain text with the token straddling the 300-byte excerpt
      return Scripted{502, std::string(280, '.') + echoed + std::string(50, '.'), "text/plain",
                      headers};
    }
    // 200 with the token in the model, a refusal text and an unknown option key.
    return Scripted{200,
                    R"({"model":")" + echoed + R"(","answers":{"u":{"type":"refusal","refusal":")" +
                        echoed + R"("}}})",
                    "application/json", headers};
  });
  clef::ClientOptions options;
  options.backend = clef::Backend::systemone;
  options.base_url = server.base_url();
  options.api_token = token;
  options.retry.max_attempts = 1;
  // The token comes back as the model's name: taken here, so the refusal text is kept to check.
  options.validation.require_asked_model = false;
  auto client = clef::Client::create(options).value();
  clef::DecisionRequest request;
  request.state = clef::State::text("x");
  request.questions = {clef::Question::yes_no("u", "Urgent?")};
  const std::string tail = token.substr(20);  // what a cut excerpt would leak
  for (int i = 0; i < 2; ++i) {
    auto d = client.decide(request);
    ASSERT_FALSE(d.ok());
    const clef::Error& e = d.error();
    for (const std::string* field :
         {&e.message, &e.server_message, &e.server_code, &e.request_id, &e.where}) {
      EXPECT_EQ(field->find(tail), std::string::npos) << *field;
    }
    EXPECT_EQ(e.to_string().find(tail), std::string::npos) << e.to_string();
    EXPECT_NE(e.to_string().find("<redacted>"), std::string::npos) << e.to_string();
  }
  auto d = client.decide(request);
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d->model, "<redacted>");
  EXPECT_EQ(d->request_id, "Bearer <redacted>");
  EXPECT_EQ(d->raw_json.find(token), std::string::npos);
  EXPECT_EQ(d->answers[0].problem, "<redacted>");
  EXPECT_EQ(d->answers[0].raw_json.find(token), std::string::npos);
}

TEST(Redaction, ShortTokensEchoedByTheServerStillEnd) {
  const std::map<std::string, std::string> expected = {
      {"e", "B<redacted>ar<redacted>r <redacted> B<redacted>ar<redacted>r <redacted>"},
      {"<", "Bearer <redacted> Bearer <redacted>"},
      {"red", "Bearer <redacted> Bearer <redacted>"}};
  for (const auto& [token, message] : expected) {
    FakeServer server;
    server.set_script([](const clef::testing::RecordedRequest& r, int) -> std::optional<Scripted> {
      const std::string auth = r.header("Authorization");
      return Scripted{500,
                      R"({"error":")" + auth + " " + auth + R"("})",
                      "application/json",
                      {{"X-Request-Id", auth}}};
    });
    clef::ClientOptions options;
    options.backend = clef::Backend::systemone;
    options.base_url = server.base_url();
    options.api_token = token;
    options.retry.max_attempts = 1;
    clef::DecisionRequest request;
    request.state = clef::State::text("x");
    request.questions = {clef::Question::yes_no("u", "Urgent?")};
    auto d = clef::Client::create(options).value().decide(request);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().kind, ErrorKind::server_error);
    EXPECT_EQ(d.error().server_message, message) << token;
    EXPECT_EQ(d.error().request_id, message.substr(0, message.size() / 2)) << token;
  }
}

TEST(BoundedWaits, RetryAfterPastTheCapComesBackAtOnce) {
  Rig s(http_response(429, R"({"error":"slow down"})", {{"retry-after", "3600"}}));
  std::vector<std::chrono::milliseconds> waits;
  s.options.sleep = [&](std::chrono::milliseconds d) { waits.push_back(d); };
  auto d = s.decide();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::rate_limited);
  EXPECT_EQ(d.error().retry_after, std::chrono::milliseconds(3'600'000));
  EXPECT_TRUE(waits.empty());  // no silent hour
  EXPECT_EQ(s.transport->sent, 1);
  EXPECT_NE(d.error().message.find("more than the 60000 ms clef waits"), std::string::npos);
}

TEST(BoundedWaits, HugeRetryAfterValuesSaturateInsteadOfOverflowing) {
  using clef::detail::retry_after;
  for (const char* value : {"9223372036854775807", "99999999999999999999999999999999999999"}) {
    auto wait = retry_after(http_response(429, "", {{"retry-after", value}}));
    ASSERT_TRUE(wait.has_value()) << value;
    EXPECT_EQ(*wait, clef::detail::max_retry_after_value) << value;
  }
  // Not delay-seconds (RFC 9110: digits only), so no Retry-After at all: the backoff applies.
  for (const char* value : {"9e9", "1e300", "inf"})
    EXPECT_FALSE(retry_after(http_response(429, "", {{"retry-after", value}})).has_value());
  auto ms = retry_after(http_response(429, "", {{"retry-after-ms", "9223372036854775807"}}));
  EXPECT_EQ(ms, clef::detail::max_retry_after_value);
  EXPECT_FALSE(retry_after(http_response(429, "", {{"retry-after", "-5"}})).has_value());
  EXPECT_FALSE(retry_after(http_response(429, "", {{"retry-after", "nan"}})).has_value());
}

TEST(BoundedWaits, TokenCountsSaturate) {
  using clef::detail::token_count;
  EXPECT_EQ(token_count(1e30), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(token_count(9.3e18), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(token_count(-5), 0);
  EXPECT_EQ(token_count(12.7), 12);
  Rig s(http_response(
      200,
      R"({"answers":{"u":{"type":"noul","noul":0.5}},"usage":{"input_tokens":1e19,"output_tokens":-3}})"));
  auto d = s.decide();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->usage.input_tokens, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(d->usage.output_tokens, 0);
}

TEST(BoundedWaits, WorkersDailyAllocationIsNeverRetried) {
  for (const char* code : {"4006", "3036"}) {
    Rig s(http_response(
              429,
              std::string(R"({"success":false,"result":null,"errors":[{"code":)") + code +
                  R"(,"message":"you have used up your daily free allocation"}],"messages":[]})"),
          clef::Backend::workers_ai);
    s.options.retry.max_attempts = 5;
    auto d = s.decide();
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().kind, ErrorKind::quota_exhausted) << code;
    EXPECT_FALSE(d.error().retryable());
    EXPECT_EQ(s.transport->sent, 1) << code;
  }
  Rig capacity(http_response(429, R"({"success":false,"errors":[{"code":3040,"message":"busy"}]})"),
               clef::Backend::workers_ai);
  capacity.options.retry.max_attempts = 3;
  EXPECT_EQ(capacity.decide().error().kind, ErrorKind::rate_limited);
  EXPECT_EQ(capacity.transport->sent, 3);  // 3040 is capacity: retried
}

TEST(BoundedWaits, BatchStopsStartingAtTheFirstQuotaError) {
  Rig s(http_response(429, R"({"success":false,"errors":[{"code":4006,"message":"daily"}]})"),
        clef::Backend::workers_ai);
  std::size_t pulled = 0;
  std::size_t delivered = 0;
  clef::BatchOptions options;
  options.concurrency = 1;
  auto client = clef::Client::create(s.options).value();
  auto summary = clef::run_batch(
      client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (++pulled > 100) return std::nullopt;
        return clef::Result<clef::DecisionRequest>(s.request);
      },
      [&](std::size_t index, clef::Result<clef::Decision>&& r) {
        // The first is the refusal; the one read ahead for the loop comes back unsent.
        EXPECT_EQ(r.error().kind, index == 0 ? ErrorKind::quota_exhausted : ErrorKind::cancelled);
        ++delivered;
      },
      options);
  EXPECT_TRUE(summary.quota_exhausted);
  EXPECT_LE(summary.started, 2u);
  EXPECT_EQ(delivered, summary.started);
  EXPECT_EQ(s.transport->sent, 1);
}

TEST(Options, TimeoutsOutsideOneMillisecondToOneDayAreRefused) {
  for (auto bad : {0ms, -5ms, std::chrono::milliseconds(std::chrono::hours(25))}) {
    clef::ClientOptions options;
    options.base_url = "http://127.0.0.1:1";
    options.request_timeout = bad;
    auto client = clef::Client::create(options);
    ASSERT_FALSE(client.ok());
    EXPECT_EQ(client.error().where, "request_timeout");
    options.request_timeout = 1ms;
    options.connect_timeout = bad;
    EXPECT_EQ(clef::Client::create(options).error().where, "connect_timeout");
  }
  clef::ClientOptions options;
  options.base_url = "http://127.0.0.1:1";
  options.ca_file = "/nonexistent/ca.pem";
  auto client = clef::Client::create(options);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error().where, "ca_file");
}

TEST(HostileServer, ProxyAuthAndOversizedHeadersGetTheirOwnMessages) {
  FakeServer server;
  server.set_script([](const clef::testing::RecordedRequest&, int call) -> std::optional<Scripted> {
    if (call == 0) return Scripted{407, "Proxy Authentication Required", "text/plain"};
    return Scripted{200, "{}", "application/json", {{"X-Padding", std::string(80'000, 'p')}}};
  });
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.max_attempts = 1;
  auto client = clef::Client::create(options).value();
  clef::DecisionRequest request;
  request.state = clef::State::text("x");
  request.questions = {clef::Question::yes_no("u", "Urgent?")};
  auto proxy = client.decide(request);
  EXPECT_EQ(proxy.error().kind, ErrorKind::authentication);
  EXPECT_NE(proxy.error().message.find("proxy"), std::string::npos);
  auto headers = client.decide(request);
  EXPECT_EQ(headers.error().kind, ErrorKind::invalid_response);
  EXPECT_NE(headers.error().message.find("headers are larger than 64 KiB"), std::string::npos)
      << headers.error().to_string();
  // One line past libcurl's own 100 KiB: libcurl stops before clef's cap sees it, with "out of
  // memory", which is no connection failure.
  server.set_script([](const clef::testing::RecordedRequest&, int) -> std::optional<Scripted> {
    return Scripted{200, "{}", "application/json", {{"X-Padding", std::string(300'000, 'p')}}};
  });
  auto line = client.decide(request);
  EXPECT_EQ(line.error().kind, ErrorKind::invalid_response) << line.error().to_string();
  EXPECT_NE(line.error().message.find("a response header line is larger than libcurl takes"),
            std::string::npos)
      << line.error().to_string();
}

/// A server on 127.0.0.1 that answers one connection with `reply`'s bytes, whatever was asked,
/// and closes it: for replies no HTTP server library would write.
class RawReply {
 public:
  explicit RawReply(std::string reply) {
    m_thread = std::thread([this, reply = std::move(reply)] {
      if (!m_listener.accept_one()) return;
      m_listener.send_and_close(reply);
    });
  }
  ~RawReply() { m_thread.join(); }
  std::string url() const { return m_listener.url(); }

 private:
  clef::testing::SilentListener m_listener;
  std::thread m_thread;
};

TEST(HostileServer, AReplyThatIsNotHttpIsTheServersFaultNotOneThatIsDown) {
  // A server that answered garbage was "cannot connect" (exit 5, "is Ollama running?").
  const std::vector<std::pair<std::string, std::string>> replies = {
      {"HTTP/0.9", "garbage that is no status line\r\n\r\n{}"},
      {"a chunk size past any",
       "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
       "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}"}};
  for (const auto& [what, bytes] : replies) {
    RawReply server(bytes);
    clef::ClientOptions options;
    options.base_url = server.url();
    options.retry.max_attempts = 1;
    clef::DecisionRequest request;
    request.state = clef::State::text("x");
    request.questions = {clef::Question::yes_no("u", "Urgent?")};
    auto decision = clef::Client::create(options).value().decide(request);
    ASSERT_FALSE(decision) << what;
    EXPECT_EQ(decision.error().kind, ErrorKind::invalid_response)
        << what << ": " << decision.error().to_string();
    EXPECT_NE(decision.error().message.find("is misbehaving"), std::string::npos)
        << what << ": " << decision.error().to_string();
  }
}

TEST(HostileServer, AnErrorStatusWithABodyPastTheCapIsStillThatError) {
  // An error status with a body past max_response_bytes is still that status's error: a 402 is
  // a spent budget, a 429 a rate limit (its code is in the bytes cut off: a spend limit's 2041
  // is read only from a body that fits), while a 200 that large stays invalid.
  FakeServer server;
  server.set_script([](const clef::testing::RecordedRequest&, int call) -> std::optional<Scripted> {
    const std::string padding(8'000, 'x');
    if (call == 0) return Scripted{402, "no credit " + padding, "text/plain"};
    if (call == 1) {
      return Scripted{429, R"({"error":[{"code":2041,"message":"Spend limit exceeded"}],"pad":")" +
                               padding + "\"}"};
    }
    return Scripted{200, "{\"pad\":\"" + padding + "\"}"};
  });
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.max_attempts = 1;
  options.max_response_bytes = 1024;
  auto client = clef::Client::create(options).value();
  clef::DecisionRequest request;
  request.state = clef::State::text("x");
  request.questions = {clef::Question::yes_no("u", "Urgent?")};
  auto credit = client.decide(request);
  ASSERT_FALSE(credit);
  EXPECT_EQ(credit.error().kind, ErrorKind::quota_exhausted) << credit.error().to_string();
  EXPECT_EQ(credit.error().http_status, 402);
  auto limited = client.decide(request);
  ASSERT_FALSE(limited);
  EXPECT_EQ(limited.error().kind, ErrorKind::rate_limited) << limited.error().to_string();
  EXPECT_EQ(limited.error().http_status, 429);
  auto big = client.decide(request);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().kind, ErrorKind::invalid_response);
  EXPECT_NE(big.error().message.find("1024-byte limit"), std::string::npos);
}

TEST(Dedupe, KeepsADigestPerUniqueBodyAndAnnouncesDuplicates) {
  FakeServer server;
  clef::ClientOptions options;
  options.base_url = server.base_url();
  auto client = clef::Client::create(options).value();
  std::vector<clef::DecisionRequest> requests(30);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].state = clef::State::text("ticket " + std::to_string(i % 3));
    requests[i].questions = {clef::Question::yes_no("u", "Urgent?")};
  }
  std::size_t next = 0;
  std::vector<std::pair<std::size_t, std::size_t>> duplicates;
  std::set<std::size_t> delivered;
  clef::BatchOptions batch;
  batch.dedupe = true;
  batch.ordered = true;
  batch.on_duplicate = [&](std::size_t index, std::size_t first) {
    EXPECT_TRUE(delivered.count(first)) << "a duplicate comes after its first";
    duplicates.emplace_back(index, first);
  };
  auto summary = clef::run_batch(
      client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == requests.size()) return std::nullopt;
        return clef::Result<clef::DecisionRequest>(requests[next++]);
      },
      [&](std::size_t index, clef::Result<clef::Decision>&&) { delivered.insert(index); }, batch);
  EXPECT_EQ(server.request_count(), 3);
  EXPECT_EQ(delivered, (std::set<std::size_t>{0, 1, 2}));
  EXPECT_EQ(duplicates.size(), 27u);
  EXPECT_EQ(summary.deduplicated, 27u);
  for (const auto& [index, first] : duplicates) EXPECT_EQ(first, index % 3);
  EXPECT_EQ(clef::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
