// One mapping from (status, headers, body) to an Error, for every server's error shape.
#include <gtest/gtest.h>

#include <ctime>

#include "clef/ollama.hpp"
#include "wire/http_errors.hpp"
#include "wire/workers_ai.hpp"

namespace {

using clef::Backend;
using clef::ErrorKind;

clef::Error map(Backend backend, int status, const std::string& body, clef::Headers headers = {}) {
  clef::HttpResponse response;
  response.status = status;
  response.body = body;
  response.headers = std::move(headers);
  return clef::detail::error_from_response(backend, response, "clef-flash");
}

struct Case {
  std::string name;
  Backend backend;
  int status;
  std::string body;
  ErrorKind kind;
  std::string server_message;
  std::string server_code;
  bool retryable;
};

class ErrorMapping : public ::testing::TestWithParam<Case> {};

TEST_P(ErrorMapping, KindMessageCodeRetry) {
  const Case& c = GetParam();
  const clef::Error error = map(c.backend, c.status, c.body);
  EXPECT_EQ(error.kind, c.kind) << clef::to_string(error.kind);
  EXPECT_EQ(error.http_status, c.status);
  EXPECT_EQ(error.server_message, c.server_message);
  EXPECT_EQ(error.server_code, c.server_code);
  EXPECT_EQ(error.retryable(), c.retryable);
  EXPECT_NE(error.to_string().find(c.server_message), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Servers, ErrorMapping,
    ::testing::Values(
        Case{"ollama_413_tv2", Backend::ollama, 413,
             R"({"error": "request body must not exceed 64 KiB without images"})",
             ErrorKind::request_rejected, "request body must not exceed 64 KiB without images", "",
             false},
        Case{"ollama_model_missing", Backend::ollama, 404,
             R"({"error":"model \"clef-flash\" not found, try pulling it first"})",
             ErrorKind::not_found, "model \"clef-flash\" not found, try pulling it first", "",
             false},
        Case{"ollama_too_old_plain_text", Backend::ollama, 404, "404 page not found",
             ErrorKind::not_found, "404 page not found", "", false},
        Case{"ollama_500", Backend::ollama, 500, R"({"error":"inference failed"})",
             ErrorKind::server_error, "inference failed", "", true},
        Case{
            "workers_413_5021_tv15", Backend::workers_ai, 413,
            R"({"errors":[{"message":"AiError: Ai: The estimated number of input and maximum output tokens (208406) exceeded this model context window limit (65536).","code":5021}],"success":false,"result":{},"messages":[]})",
            ErrorKind::request_rejected,
            "AiError: Ai: The estimated number of input and maximum output tokens (208406) "
            "exceeded this model context window limit (65536).",
            "5021", false},
        Case{
            "workers_401", Backend::workers_ai, 401,
            R"({"result":null,"success":false,"errors":[{"code":10000,"message":"Authentication error"}],"messages":[]})",
            ErrorKind::authentication, "Authentication error", "10000", false},
        Case{
            "workers_429_capacity", Backend::workers_ai, 429,
            R"({"result":null,"success":false,"errors":[{"code":3040,"message":"Capacity temporarily exceeded"}],"messages":[]})",
            ErrorKind::rate_limited, "Capacity temporarily exceeded", "3040", true},
        Case{
            "workers_429_daily", Backend::workers_ai, 429,
            R"({"result":null,"success":false,"errors":[{"code":4006,"message":"you have used up your daily free allocation"}],"messages":[]})",
            ErrorKind::quota_exhausted, "you have used up your daily free allocation", "4006",
            false},
        // Provider budgets are stops: AI Gateway's spend limit (2041, its `error` an array or an
        // object, or the code as internalCode), a 402, OpenAI's insufficient_quota.
        Case{"gateway_429_spend_limit_array", Backend::workers_ai, 429,
             R"({"success":false,"error":[{"code":2041,"message":"Spend limit exceeded"}]})",
             ErrorKind::quota_exhausted, "Spend limit exceeded", "2041", false},
        Case{"gateway_429_spend_limit_object", Backend::workers_ai, 429,
             R"({"error":{"code":2041,"message":"Spend limit exceeded"}})",
             ErrorKind::quota_exhausted, "Spend limit exceeded", "2041", false},
        Case{
            "gateway_429_spend_limit_internal_code", Backend::workers_ai, 429,
            R"({"success":false,"error":[{"message":"Spend limit exceeded"}],"internalCode":2041})",
            ErrorKind::quota_exhausted, "Spend limit exceeded", "2041", false},
        Case{"openai_402", Backend::openai, 402,
             R"({"error":{"message":"Insufficient credits","type":"payment_required","code":402}})",
             ErrorKind::quota_exhausted, "Insufficient credits", "payment_required", false},
        Case{
            "openai_429_insufficient_quota", Backend::openai, 429,
            R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})",
            ErrorKind::quota_exhausted, "You exceeded your current quota", "insufficient_quota",
            false},
        // The spend limit anywhere in the list, or written as a float, is still the spend limit.
        Case{
            "workers_429_spend_limit_after_a_rate_limit", Backend::workers_ai, 429,
            R"({"success":false,"errors":[{"code":3021,"message":"Rate limited"},{"code":2041,"message":"Spend limit exceeded"}]})",
            ErrorKind::quota_exhausted, "Rate limited; Spend limit exceeded", "2041", false},
        Case{"gateway_429_spend_limit_float", Backend::workers_ai, 429,
             R"({"error":[{"code":2041.0,"message":"Spend limit exceeded"}]})",
             ErrorKind::quota_exhausted, "Spend limit exceeded", "2041", false},
        Case{
            "gateway_429_spend_limit_object_with_type", Backend::workers_ai, 429,
            R"({"error":{"type":"gateway_error","code":2.041e3,"message":"Spend limit exceeded"}})",
            ErrorKind::quota_exhausted, "Spend limit exceeded", "2041", false},
        // Workers AI's per-minute limit is a rate limit, to wait out and retry.
        Case{
            "workers_429_per_minute", Backend::workers_ai, 429,
            R"({"result":null,"success":false,"errors":[{"code":3021,"message":"AiError: inference request per min rate reached"}],"messages":[]})",
            ErrorKind::rate_limited, "AiError: inference request per min rate reached", "3021",
            true},
        Case{
            "workers_400_per_minute", Backend::workers_ai, 400,
            R"({"result":null,"success":false,"errors":[{"code":3021,"message":"AiError: inference request per min rate reached"}],"messages":[]})",
            ErrorKind::rate_limited, "AiError: inference request per min rate reached", "3021",
            true},
        Case{"typesafe_detail_object", Backend::systemone, 529,
             R"({"detail":{"type":"overloaded_error","message":"Overloaded"}})",
             ErrorKind::server_error, "Overloaded", "overloaded_error", true},
        Case{"typesafe_error_type", Backend::systemone, 401,
             R"({"detail":{"error_type":"authentication_error","message":"Invalid API key"}})",
             ErrorKind::authentication, "Invalid API key", "authentication_error", false},
        Case{"typesafe_422_list", Backend::systemone, 422,
             R"({"detail":[{"loc":["body","state"],"msg":"Field required","type":"missing"}]})",
             ErrorKind::request_rejected, "state: Field required", "", false},
        Case{"typesafe_detail_string", Backend::systemone, 400, R"({"detail":"Bad request"})",
             ErrorKind::request_rejected, "Bad request", "", false},
        Case{
            "llamacpp_422", Backend::systemone, 422,
            R"({"error":{"code":422,"message":"score needs 2 levels","type":"unprocessable_entity_error"}})",
            ErrorKind::request_rejected, "score needs 2 levels", "unprocessable_entity_error",
            false},
        Case{"ollaya_503_queue_full", Backend::systemone, 503,
             R"({"error":"queue is full","code":"QUEUE_FULL","detail":null})",
             ErrorKind::server_error, "queue is full", "QUEUE_FULL", true},
        Case{
            "ollaya_422_tv17", Backend::systemone, 422,
            R"({"error":"state: Field required; questions.urgency.score.criteria: List should have at least 2 items after validation, not 1","code":"INVALID_REQUEST","detail":[{"loc":["body","state"],"msg":"Field required","type":"missing"}]})",
            ErrorKind::request_rejected,
            "state: Field required; questions.urgency.score.criteria: List should have at least 2 "
            "items after validation, not 1",
            "INVALID_REQUEST", false},
        Case{"llmman_501", Backend::systemone, 501, R"({"error":"engine cannot serve decisions"})",
             ErrorKind::server_error, "engine cannot serve decisions", "", false},
        Case{"proxy_502_html", Backend::systemone, 502, "<html>Bad Gateway</html>\n",
             ErrorKind::server_error, "<html>Bad Gateway</html>", "", true},
        Case{"timeout_408", Backend::systemone, 408, "", ErrorKind::timeout, "", "", true},
        Case{"redirect_302", Backend::systemone, 302, "", ErrorKind::invalid_response, "", "",
             false}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(ErrorHints, AProvidersBudgetIsNamed) {
  EXPECT_NE(map(Backend::workers_ai, 429, R"({"error":[{"code":2041,"message":"x"}]})")
                .message.find("the AI Gateway spend limit is reached"),
            std::string::npos);
  EXPECT_NE(map(Backend::openai, 402, "{}").message.find("402 Payment Required"),
            std::string::npos);
  // A Workers AI envelope with success: false says the same whatever its status.
  clef::HttpResponse response;
  response.status = 200;
  const auto spent = clef::detail::error_from_envelope(
      nlohmann::json::parse(
          R"({"success":false,"errors":[],"error":[{"code":2041,"message":"s"}]})"),
      response);
  EXPECT_EQ(spent.kind, ErrorKind::quota_exhausted);
  const auto per_minute = clef::detail::error_from_envelope(
      nlohmann::json::parse(R"({"success":false,"errors":[{"code":3021,"message":"m"}]})"),
      response);
  EXPECT_EQ(per_minute.kind, ErrorKind::rate_limited);
}

TEST(ErrorHints, SayWhatToDo) {
  EXPECT_NE(
      map(Backend::ollama, 404, "404 page not found").message.find("upgrade Ollama to 0.35.1"),
      std::string::npos);
  EXPECT_NE(map(Backend::ollama, 404, R"({"error":"model not found"})")
                .message.find("ollama pull clef-flash"),
            std::string::npos);
  EXPECT_NE(map(Backend::workers_ai, 401, "{}").message.find("CLOUDFLARE_API_TOKEN"),
            std::string::npos);
}

TEST(ErrorHints, APlainTextBodyPastItsExcerptSaysItWasCut) {
  // A proxy's 200 KB HTML page: 300 bytes of it, cut on a character and said to be cut (it
  // stopped mid-word with nothing to say so).
  const std::string page = "<html>" + std::string(1000, 'x') + "\xc3\xa9</html>";
  const clef::Error error = map(Backend::ollama, 502, page);
  EXPECT_NE(error.message.find("<html>xxx"), std::string::npos) << error.message;
  EXPECT_EQ(error.message.substr(error.message.size() - 3), "...") << error.message;
  EXPECT_LT(error.message.size(), 400u) << error.message;
  EXPECT_EQ(map(Backend::ollama, 502, "short").message.find("..."), std::string::npos);
}

TEST(RetryAfter, MillisecondsWinOverSecondsAndDatesWork) {
  clef::HttpResponse r;
  r.headers = {{"retry-after-ms", "1500"}, {"retry-after", "9"}};
  EXPECT_EQ(clef::detail::retry_after(r)->count(), 1500);
  r.headers = {{"retry-after", "2"}};
  EXPECT_EQ(clef::detail::retry_after(r)->count(), 2000);
  r.headers = {{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}};  // in the past: no wait
  EXPECT_EQ(clef::detail::retry_after(r)->count(), 0);
  r.headers = {{"retry-after", "soon"}};
  EXPECT_FALSE(clef::detail::retry_after(r).has_value());
}

TEST(RetryAfter, ReadAsRfc9110WritesItAndClamped) {
  clef::HttpResponse r;
  const auto wait = [&](const std::string& value) {
    r.headers = {{"retry-after", value}};
    return clef::detail::retry_after(r);
  };
  const long long cap = clef::detail::max_retry_after_value.count();
  // delay-seconds is digits only: what strtod would also take is no delay.
  for (const char* bad : {"0x10", "1e3", "-5", "+5", "5.5", "inf", "nan", "5s", " ", "1 2"})
    EXPECT_FALSE(wait(bad).has_value()) << bad;
  EXPECT_EQ(wait(" 7\t")->count(), 7000);  // optional white space around the value
  EXPECT_EQ(wait("99999999999999999999999999")->count(), cap);  // saturated, never wrapped
  // The three date forms a recipient must accept; far-future dates wait the cap (UBSan aborted
  // on a date after 2262, and Release retried at once).
  for (const char* future :
       {"Fri, 31 Dec 9999 23:59:59 GMT", "Sat, 01 Jan 2263 00:00:00 GMT",
        "Friday, 31-Dec-49 23:59:59 GMT", "Fri Dec 31 23:59:59 9999", "Sun Jan  1 00:00:00 2262"})
    EXPECT_EQ(wait(future)->count(), cap) << future;
  for (const char* past : {"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
                           "Sun Nov  6 08:49:37 1994"})
    EXPECT_EQ(wait(past)->count(), 0) << past;
  for (const char* bad : {"Sun, 31 Feb 2026 00:00:00 GMT", "Sun, 06 Nov 1994 25:00:00 GMT",
                          "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT",
                          "Sun, 06 Nov 10000 08:49:37 GMT", "tomorrow"})
    EXPECT_FALSE(wait(bad).has_value()) << bad;
  // A date a minute away is a minute's wait (within the second the test takes).
  const std::time_t soon = std::time(nullptr) + 60;
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&soon));
  EXPECT_NEAR(static_cast<double>(wait(text)->count()), 60000.0, 2000.0) << text;
  // retry-after-ms: digits, maybe a fraction; nothing else.
  r.headers = {{"retry-after-ms", "0x10"}, {"retry-after", "3"}};
  EXPECT_EQ(clef::detail::retry_after(r)->count(), 3000);
  r.headers = {{"retry-after-ms", "250.5"}};
  EXPECT_EQ(clef::detail::retry_after(r)->count(), 250);
}

TEST(RequestId, EachServersHeader) {
  clef::HttpResponse r;
  r.headers = {{"cf-ray", "ray1"}, {"cf-ai-req-id", "ai1"}};
  EXPECT_EQ(clef::detail::request_id(r), "ai1");
  r.headers = {{"x-typesafe-request-id", "req_9"}};
  EXPECT_EQ(clef::detail::request_id(r), "req_9");
  r.headers = {};
  EXPECT_EQ(clef::detail::request_id(r), "");
}

TEST(WorkersEnvelope, UnsuccessfulAt200IsAnError) {
  clef::HttpResponse r;
  r.status = 200;
  auto inner = clef::detail::unwrap_workers_envelope(
      clef::detail::Json::parse(
          R"({"result":{},"success":false,"errors":[{"code":5006,"message":"Bad input"}],"messages":[]})"),
      r);
  ASSERT_FALSE(inner.ok());
  EXPECT_EQ(inner.error().server_code, "5006");
  EXPECT_EQ(inner.error().server_message, "Bad input");
}

}  // namespace

namespace {

std::string hint_for(Backend backend, const std::string& body, const std::string& url) {
  clef::HttpResponse response;
  response.status = 404;
  response.body = body;
  return clef::detail::error_from_response(backend, response, "clef-flash", {}, url).message;
}

TEST(NotFoundHints, TellWrongPathMissingModelAndOldServerApart) {
  const std::string plain = "404 page not found";
  const std::string model_missing = R"({"error":"model 'clef-flash' not found"})";
  // --host http://host:11434/v1 makes /v1/v1/systemone: the URL is at fault, not the version.
  const std::string doubled = hint_for(Backend::ollama, plain, "http://h:11434/v1/v1/systemone");
  EXPECT_NE(doubled.find("repeats /v1"), std::string::npos) << doubled;
  EXPECT_EQ(doubled.find("upgrade"), std::string::npos) << doubled;
  const std::string old = hint_for(Backend::ollama, plain, "http://h:11434/v1/systemone");
  EXPECT_NE(old.find("upgrade Ollama to 0.35.1"), std::string::npos) << old;
  const std::string pull = hint_for(Backend::ollama, model_missing, "http://h:11434/v1/systemone");
  EXPECT_NE(pull.find("ollama pull clef-flash"), std::string::npos) << pull;
  const std::string prefixed = hint_for(Backend::ollama, plain, "http://h:11434/api/v1/systemone");
  EXPECT_NE(prefixed.find("base URL"), std::string::npos) << prefixed;
  EXPECT_EQ(prefixed.find("upgrade"), std::string::npos) << prefixed;
  // A generic server is never told to `ollama pull`.
  const std::string generic = hint_for(Backend::systemone, plain, "http://h:8000/x/v1/systemone");
  EXPECT_NE(generic.find("nothing answers at http://h:8000/x/v1/systemone"), std::string::npos);
  EXPECT_EQ(generic.find("ollama"), std::string::npos) << generic;
  const std::string no_model = hint_for(
      Backend::systemone, R"({"detail":"model clef-flash not found"})", "http://h/v1/systemone");
  EXPECT_NE(no_model.find("has no model \"clef-flash\""), std::string::npos) << no_model;
  const std::string route =
      hint_for(Backend::workers_ai,
               R"({"success":false,"errors":[{"code":7000,"message":"No route for that URI"}]})",
               "https://x/accounts/a/ai/run/@cf/cloudflare/clef-flash");
  EXPECT_NE(route.find("/client/v4"), std::string::npos) << route;
}

TEST(ErrorHints, AnMlxTagIsToldToUseTheDefaultTag) {
  // Ollama answers 400 for an MLX or Safetensors build on /v1/systemone (protocol.md); the
  // Clef-Flash card: "MLX models are not supported on /v1/systemone… use the default tag".
  clef::HttpResponse response;
  response.status = 400;
  response.body = R"({"error":"MLX models are not supported on /v1/systemone"})";
  for (const char* model : {"clef-flash:mlx-q4", "clef-flash"}) {
    const auto error = clef::detail::error_from_response(Backend::ollama, response, model);
    EXPECT_EQ(error.kind, ErrorKind::request_rejected);
    EXPECT_NE(error.message.find("use the default tag"), std::string::npos) << error.message;
  }
  response.body = R"({"error":"invalid question"})";
  const auto tagged =
      clef::detail::error_from_response(Backend::ollama, response, "clef-flash:9b-safetensors");
  EXPECT_NE(tagged.message.find("use the default tag"), std::string::npos) << tagged.message;
  const auto plain = clef::detail::error_from_response(Backend::ollama, response, "clef-flash");
  EXPECT_EQ(plain.message.find("default tag"), std::string::npos) << plain.message;
  EXPECT_TRUE(clef::is_mlx_or_safetensors_tag("clef-flash:MLX-q4"));
  EXPECT_FALSE(clef::is_mlx_or_safetensors_tag("mlx-community/clef"));  // a name, not a tag
  clef::OllamaModel gguf{"clef-flash:latest", "d", {"decision"}, "gguf"};
  clef::OllamaModel safetensors{"clef-flash:latest", "d", {"decision"}, "safetensors"};
  EXPECT_TRUE(gguf.serves_systemone());
  EXPECT_FALSE(safetensors.serves_systemone());
}

TEST(WorkersAi, ApiRootAndModelNames) {
  using clef::detail::workers_api_root;
  EXPECT_EQ(workers_api_root("https://api.cloudflare.com"), "https://api.cloudflare.com/client/v4");
  EXPECT_EQ(workers_api_root("https://api.cloudflare.com/client/v4/"),
            "https://api.cloudflare.com/client/v4");
  EXPECT_EQ(workers_api_root("https://gateway.example/v1/acct/workers-ai"),
            "https://gateway.example/v1/acct/workers-ai");
  auto latest = clef::detail::workers_model("clef-flash:latest");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->path, "@cf/cloudflare/clef-flash");
  EXPECT_EQ(latest->body, "clef-flash");
  auto full = clef::detail::workers_model("@cf/cloudflare/clef");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->body, "clef");
  auto tagged = clef::detail::workers_model("clef-flash:9b");
  ASSERT_FALSE(tagged.ok());
  EXPECT_NE(tagged.error().message.find("no tags"), std::string::npos);
}

}  // namespace
