// Workers AI through Cloudflare AI Gateway: the URL, the cf-aig-* headers byte for byte, what the
// gateway reports back (cf-aig-cache-status, cf-aig-log-id) kept in the Decision and its JSON,
// the gateway's own error body, and every limit refused before anything is sent.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "clef/clef.hpp"
#include "clef/mock.hpp"
#include "wire/http_errors.hpp"

namespace {

clef::DecisionRequest refund_ticket() {
  clef::DecisionRequest request;
  request.state = clef::State::text("I was charged twice. Please refund the extra payment.");
  request.questions = {clef::Question::yes_no("refund", "Asks for a refund?")};
  return request;
}

/// Straight to the mock's Workers AI, no gateway in front.
clef::ClientOptions direct(const clef::MockServer& server) {
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.base_url = server.base_url() + "/client/v4";
  options.account_id = "acc9";
  options.api_token = "test-token";
  return options;
}

clef::ClientOptions through(const clef::MockServer& server) {
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.base_url = server.base_url() + "/v1";  // in place of https://gateway.ai.cloudflare.com/v1
  options.account_id = "acc9";
  options.api_token = "test-token";
  options.retry.max_attempts = 1;
  options.gateway.id = "support-gw";
  return options;
}

TEST(Gateway, HeadersAndUrlAreExactAndTheGatewaysReportIsKept) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  server.set_gateway("support-gw");
  clef::ClientOptions options = through(server);
  options.gateway.cache_ttl = std::chrono::seconds(3600);
  options.gateway.collect_log_payload = false;
  options.gateway.metadata = {
      {"team", std::string("support")}, {"ticket", 4217LL}, {"vip", true}, {"score", 0.75}};
  auto client = clef::Client::create(options);
  ASSERT_TRUE(client.ok()) << client.error().to_string();
  EXPECT_EQ(client->endpoint(refund_ticket()),
            server.base_url() + "/v1/acc9/support-gw/workers-ai/@cf/cloudflare/clef-flash");

  auto first = client->decide(refund_ticket());
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  const clef::MockRequest sent = server.requests().at(0);
  EXPECT_EQ(sent.path, "/v1/acc9/support-gw/workers-ai/@cf/cloudflare/clef-flash");
  EXPECT_EQ(sent.header("cf-aig-cache-ttl"), "3600");
  EXPECT_EQ(sent.header("cf-aig-collect-log-payload"), "false");
  EXPECT_EQ(sent.header("cf-aig-metadata"),
            R"({"team":"support","ticket":4217,"vip":true,"score":0.75})");
  EXPECT_EQ(sent.header("cf-aig-skip-cache"), "");
  EXPECT_EQ(sent.header("Authorization"), "Bearer test-token");
  // The body is Workers AI's own: the gateway passes it on.
  EXPECT_EQ(
      sent.body,
      R"({"model":"clef-flash","state":"I was charged twice. Please refund the extra payment.",)"
      R"("questions":{"refund":{"type":"noul","instructions":"Asks for a refund?"}}})");
  ASSERT_TRUE(first->gateway.has_value());
  EXPECT_EQ(first->gateway->cache_status, "MISS");
  EXPECT_EQ(first->gateway->log_id.size(), 26u) << first->gateway->log_id;

  auto again = client->decide(refund_ticket());  // within the TTL: the gateway's cache
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(again->gateway->cache_status, "HIT");
  EXPECT_EQ(again->answers.at(0).yes_no()->p_true, first->answers.at(0).yes_no()->p_true);

  options.gateway.skip_cache = true;
  auto skipping = clef::Client::create(options).value().decide(refund_ticket());
  ASSERT_TRUE(skipping.ok()) << skipping.error().to_string();
  EXPECT_EQ(skipping->gateway->cache_status, "MISS");
  EXPECT_EQ(server.requests().back().header("cf-aig-skip-cache"), "true");

  // clef's JSON carries it, and reads it back.
  const nlohmann::ordered_json json = clef::to_json(again.value());
  EXPECT_EQ(json["gateway"]["cache_status"], "HIT");
  EXPECT_EQ(json["gateway"]["log_id"], again->gateway->log_id);
  const clef::Decision back = clef::decision_from_json(json, refund_ticket().questions);
  ASSERT_TRUE(back.gateway.has_value());
  EXPECT_EQ(back.gateway->log_id, again->gateway->log_id);
  EXPECT_EQ(clef::dump_json(clef::to_json(back)), clef::dump_json(json));
}

TEST(Gateway, AGatewayUrlAsTheBaseHoldsTheAccount) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.base_url = server.base_url() + "/v1/acc9/default/workers-ai/";  // no account_id
  options.api_token = "test-token";
  options.gateway.skip_cache = true;
  auto decision = clef::Client::create(options).value().decide(refund_ticket());
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  EXPECT_EQ(server.requests().at(0).path, "/v1/acc9/default/workers-ai/@cf/cloudflare/clef-flash");
  EXPECT_EQ(server.requests().at(0).header("cf-aig-skip-cache"), "true");
  // Straight to Workers AI, no gateway report.
  auto plain = clef::Client::create(direct(server)).value().decide(refund_ticket());
  ASSERT_TRUE(plain.ok()) << plain.error().to_string();
  EXPECT_FALSE(plain->gateway.has_value());
  EXPECT_FALSE(clef::to_json(plain.value()).contains("gateway"));
}

// The gateway's own error body (not Workers AI's "errors"): {"success": false, "error": [...]}.
TEST(Gateway, AGatewayTheAccountLacksIsNotFoundWithTheGatewaysWords) {
  clef::MockServer server(clef::MockProfile::workers_ai);  // its gateway is "default"
  auto decision = clef::Client::create(through(server)).value().decide(refund_ticket());
  ASSERT_FALSE(decision.ok());
  const clef::Error& error = decision.error();
  EXPECT_EQ(error.kind, clef::ErrorKind::not_found) << error.to_string();
  EXPECT_EQ(error.http_status, 400);
  EXPECT_EQ(error.server_code, "2001");
  EXPECT_EQ(error.server_message, "Please configure AI Gateway in the Cloudflare dashboard");
  EXPECT_NE(error.message.find("AI Gateway has no gateway \"support-gw\" on this account"),
            std::string::npos);
  EXPECT_EQ(error.request_id.size(), 26u) << "cf-aig-log-id: " << error.request_id;

  // The same body as written, through the one error mapping.
  clef::HttpResponse response;
  response.status = 400;
  response.body = R"({"success":false,"result":[],"messages":[],"error":[{"code":2001,)"
                  R"("message":"Please configure AI Gateway in the Cloudflare dashboard"}]})";
  response.headers = {{"cf-aig-log-id", "01JABCDEFGHJKMNPQRSTVWXYZ0"}};
  const clef::Error mapped = clef::detail::error_from_response(
      clef::Backend::workers_ai, response, "clef-flash", {}, "https://gateway.ai.cloudflare.com");
  EXPECT_EQ(mapped.kind, clef::ErrorKind::not_found);
  EXPECT_EQ(mapped.server_code, "2001");
  EXPECT_EQ(mapped.request_id, "01JABCDEFGHJKMNPQRSTVWXYZ0");

  // Only the gateway's 400 means "no such gateway": any other status quoting 2001 keeps its
  // status's kind, so a 429 is still retried after its Retry-After (a fuzzer found this).
  response.status = 429;
  response.headers.emplace_back("retry-after", "3");
  const clef::Error throttled = clef::detail::error_from_response(
      clef::Backend::workers_ai, response, "clef-flash", {}, "https://gateway.ai.cloudflare.com");
  EXPECT_EQ(throttled.kind, clef::ErrorKind::rate_limited) << throttled.to_string();
  EXPECT_TRUE(throttled.retryable());
  response.status = 503;
  EXPECT_EQ(clef::detail::error_from_response(clef::Backend::workers_ai, response, "clef-flash", {},
                                              "https://gateway.ai.cloudflare.com")
                .kind,
            clef::ErrorKind::server_error);
}

TEST(Gateway, LimitsAreRefusedBeforeSendingNamingTheLimit) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  struct Case {
    std::function<void(clef::ClientOptions&)> change;
    std::string says;
  };
  const std::vector<Case> cases = {
      {[](clef::ClientOptions& o) {
         for (int i = 0; i < 6; ++i) o.gateway.metadata.push_back({"k" + std::to_string(i), true});
       },
       "cf-aig-metadata takes at most 5 entries (AI Gateway silently drops the rest), not 6"},
      {[](clef::ClientOptions& o) { o.gateway.cache_ttl = std::chrono::seconds(30); },
       "cf-aig-cache-ttl must be 60 seconds to 30 days"},
      {[](clef::ClientOptions& o) {
         o.gateway.metadata = {{"a", 1LL}, {"a", 2LL}};
       },
       "metadata key \"a\" given twice"},
      {[](clef::ClientOptions& o) {
         o.gateway.metadata = {{"", 1LL}};
       },
       "a metadata key must not be empty"},
      {[](clef::ClientOptions& o) { o.gateway.id = "has space"; }, "a gateway id is 1 to 64"},
      {[](clef::ClientOptions& o) {
         o.gateway.id.clear();
         o.gateway.skip_cache = true;
       },
       "cf-aig-* options need a gateway"},
      {[](clef::ClientOptions& o) {
         o.backend = clef::Backend::systemone;
         o.base_url = "http://127.0.0.1:1";
       },
       "AI Gateway is for the Workers AI backend"},
      {[](clef::ClientOptions& o) {
         o.gateway.metadata = {{"k", std::string("a\x7f"
                                                 "b")}};
       },
       "a metadata value must be at most 1024 bytes of UTF-8 text with no control character"},
      {[](clef::ClientOptions& o) {
         o.gateway.metadata = {{"k", std::string("\xff\xfe")}};
       },
       "a metadata value must be at most 1024 bytes"},
      {[](clef::ClientOptions& o) {
         o.gateway.metadata = {{"k", std::string(1025, 'x')}};
       },
       "a metadata value must be at most 1024 bytes"},
      {[](clef::ClientOptions& o) {
         o.gateway.metadata = {{"k\xff", 1LL}};
       },
       "a metadata key must be at most 256 bytes"},
  };
  for (const Case& c : cases) {
    clef::ClientOptions options = through(server);
    c.change(options);
    auto client = clef::Client::create(options);
    ASSERT_FALSE(client.ok()) << c.says;
    EXPECT_EQ(client.error().kind, clef::ErrorKind::invalid_input);
    EXPECT_NE(client.error().message.find(c.says), std::string::npos) << client.error().message;
  }
  // A gateway URL as the base must name an account and a gateway.
  for (const std::string path :
       {"/workers-ai", "/v1//workers-ai", "/v1/acc9//workers-ai", "/v1/acc9/sup%20port/workers-ai",
        "/v1/../acc9/gw/workers-ai", "/v1/ac-c9/gw/workers-ai"}) {
    clef::ClientOptions options;
    options.backend = clef::Backend::workers_ai;
    options.base_url = server.base_url() + path;
    options.api_token = "test-token";
    auto client = clef::Client::create(options);
    ASSERT_FALSE(client.ok()) << path;
    EXPECT_NE(client.error().message.find("a gateway URL is …/v1/ACCOUNT/GATEWAY/workers-ai"),
              std::string::npos)
        << path << ": " << client.error().message;
  }
  EXPECT_EQ(server.request_count(), 0);
}

// The gateway's headers are its own words only: a status word and an id. White space, escape
// sequences, invisible characters or a page of text are left out, never shown as sent.
TEST(Gateway, AHostileGatewaysHeadersAreLeftOut) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  // Straight to the mock's Workers AI: the scripted headers are then the only cf-aig-* ones.
  const clef::ClientOptions options = direct(server);
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"   \t ", " "},
      {"H\x1b[31mIT",
       "01J\x9b"
       "31m"},
      {"HIT\",\"x\":\"y", std::string(200, 'A')},
      {"H\xe2\x80\xaeTI", "log id"}};
  for (const auto& [status, id] : hostile) {
    server.set_script([status = status, id = id](const clef::MockRequest&, int) {
      clef::MockReply reply;
      reply.body = R"({"result":{"model":"clef-flash","answers":{"refund":{"type":"noul",)"
                   R"("noul":0.9}},"usage":{"input_tokens":5,"output_tokens":1}},"success":true,)"
                   R"("errors":[],"messages":[]})";
      reply.headers = {{"cf-aig-cache-status", status}, {"cf-aig-log-id", id}};
      return std::optional<clef::MockReply>(reply);
    });
    auto decision = clef::Client::create(options).value().decide(refund_ticket());
    ASSERT_TRUE(decision.ok()) << decision.error().to_string();
    EXPECT_FALSE(decision->gateway.has_value())
        << decision->gateway->cache_status << " / " << decision->gateway->log_id;
  }
  server.set_script([](const clef::MockRequest&, int) {
    clef::MockReply reply;
    reply.body = R"({"result":{"model":"clef-flash","answers":{"refund":{"type":"noul",)"
                 R"("noul":0.9}},"usage":{"input_tokens":5,"output_tokens":1}},"success":true,)"
                 R"("errors":[],"messages":[]})";
    reply.headers = {{"cf-aig-cache-status", " HIT "}, {"cf-aig-log-id", "01J-ok_42"}};
    return std::optional<clef::MockReply>(reply);
  });
  auto decision = clef::Client::create(options).value().decide(refund_ticket());
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  ASSERT_TRUE(decision->gateway.has_value());
  EXPECT_EQ(decision->gateway->cache_status, "HIT");
  EXPECT_EQ(decision->gateway->log_id, "01J-ok_42");
}

TEST(Gateway, AnAuthenticatedGatewayGetsItsTokenAndNoTextShowsIt) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  server.set_gateway("support-gw");
  clef::ClientOptions options = through(server);
  // No gateway token given: the Workers AI token goes in cf-aig-authorization too.
  auto reused = clef::Client::create(options).value().decide(refund_ticket());
  ASSERT_TRUE(reused.ok()) << reused.error().to_string();
  EXPECT_EQ(server.requests().back().header("cf-aig-authorization"), "Bearer test-token");

  // An Authenticated Gateway with a token of its own refuses the Workers AI one.
  server.set_gateway_token("gw-secret-77");
  auto refused = clef::Client::create(options).value().decide(refund_ticket());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, clef::ErrorKind::authentication) << refused.error().to_string();
  EXPECT_EQ(refused.error().server_code, "2009");
  options.gateway.token = "gw-secret-77";
  auto client = clef::Client::create(options).value();
  auto answered = client.decide(refund_ticket());
  ASSERT_TRUE(answered.ok()) << answered.error().to_string();
  const clef::MockRequest sent = server.requests().back();
  EXPECT_EQ(sent.header("cf-aig-authorization"), "Bearer gw-secret-77");
  EXPECT_EQ(sent.header("Authorization"), "Bearer test-token");
  bool shown_redacted = false;
  for (const auto& [name, value] : client.redacted_headers()) {
    EXPECT_EQ(value.find("gw-secret-77"), std::string::npos) << name;
    shown_redacted =
        shown_redacted || (name == "cf-aig-authorization" && value == "Bearer <redacted>");
  }
  EXPECT_TRUE(shown_redacted);

  // A server that echoes both tokens: neither reaches an error or a decision.
  server.set_script([](const clef::MockRequest&, int call) -> std::optional<clef::MockReply> {
    if (call % 2 == 0) {
      return clef::MockReply{
          400,
          R"({"errors":[{"code":5006,"message":"bad gw-secret-77 and test-token"}],"success":false,"result":{},"messages":[]})",
          "application/json",
          {{"cf-ai-req-id", "gw-secret-77"}}};
    }
    return clef::MockReply{
        200,
        R"({"result":{"model":"gw-secret-77","answers":{"refund":{"type":"noul","noul":0.9}}},"success":true,"errors":[],"messages":[]})",
        "application/json",
        {}};
  });
  auto echoed = client.decide(refund_ticket());
  ASSERT_FALSE(echoed.ok());
  const std::string text = echoed.error().to_string() + echoed.error().request_id;
  EXPECT_EQ(text.find("gw-secret-77"), std::string::npos) << text;
  EXPECT_EQ(text.find("test-token"), std::string::npos) << text;
  EXPECT_NE(text.find("<redacted>"), std::string::npos) << text;
  auto decided = client.decide(refund_ticket());
  ASSERT_TRUE(decided.ok()) << decided.error().to_string();
  EXPECT_EQ(decided->model, "<redacted>");
  EXPECT_EQ(decided->raw_json.find("gw-secret-77"), std::string::npos);

  // The token as given is what is redacted: white space or a line break around it is refused.
  options.gateway.token = "Bearer gw-secret-77";
  EXPECT_EQ(clef::Client::create(options).error().message,
            "the gateway token has a space or a byte outside visible ASCII in it (a 'Bearer ' "
            "prefix, or a pasted character?): give the bare token");
  options.gateway.token = "gw-secr\xc3\xa9t";
  EXPECT_FALSE(clef::Client::create(options).ok());
  options.gateway.token.clear();
  options.api_token = "Bearer test-token";
  EXPECT_EQ(clef::Client::create(options).error().message,
            "the API token has a space or a byte outside visible ASCII in it (a 'Bearer ' "
            "prefix, or a pasted character?): give the bare token");
  options.api_token = "test-token";
  options.gateway.token = "gw-secret-77\n";
  auto stray = clef::Client::create(options);
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(stray.error().message,
            "the gateway token has white space around it or a control character: give the bare "
            "token");
}

}  // namespace
