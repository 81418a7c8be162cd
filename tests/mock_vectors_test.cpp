// The mock checked against what the published servers send (../shared/vectors.md, protocol.md),
// profile by profile: envelopes, key orders, rounding, integer encoding, confidence formulas,
// request id headers, error bodies and refusals. Bodies are posted raw with the curl transport
// and read as text, so these tests fail if the mock drifts from a server, whatever the client
// would tolerate.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "clef/mock.hpp"
#include "clef/transport.hpp"

namespace {

using Json = nlohmann::ordered_json;
using clef::MockProfile;
using clef::MockServer;

clef::HttpResponse post(const MockServer& server, const std::string& body,
                        const std::string& path = "/v1/systemone",
                        clef::Headers headers = {{"Content-Type", "application/json"}}) {
  clef::HttpRequest request;
  request.url = server.base_url() + path;
  request.body = body;
  request.headers = std::move(headers);
  request.proxy = "";
  auto response = clef::make_curl_transport()->send(request);
  EXPECT_TRUE(response.ok()) << response.error().to_string();
  return response ? response.value() : clef::HttpResponse{};
}

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

/// True when `value` has at most `decimals` digits after the point.
bool rounded_to(double value, int decimals) {
  const double scaled = value * std::pow(10.0, decimals);
  return std::fabs(scaled - std::round(scaled)) < 1e-6;
}

double entropy_confidence(const std::vector<double>& p) {
  double h = 0;
  for (double x : p)
    if (x > 0) h -= x * std::log(x);
  return 1 - h / std::log(static_cast<double>(p.size()));
}

// TV-1 (Ollama's docs example) with the card's model name.
const char* tv1_request =
    R"({"model":"nimble","state":"Our checkout has returned 500 errors since 9am.","questions":{"label":{"type":"choice","instructions":"Which label fits this ticket?","criteria":{"billing":"Payments and refunds","bug":"Software errors","account":"Login and account access"}}}})";

// TV-3, the card's ticket with all three types.
const char* tv3_request =
    R"({"model":"clef-flash","state":{"ticket":"I was charged twice. Please refund the extra payment."},"questions":{"team":{"type":"choice","instructions":"Which team should handle this ticket?","criteria":{"billing":"Payments and refunds","technical":"Bugs and integrations","other":"None of the above"}},"refund":{"type":"noul","instructions":"Does the customer explicitly ask for a refund?"},"urgency":{"type":"score","instructions":"How urgent is this ticket?","criteria":["Routine","Soon","Urgent"]}}})";

TEST(MockVectors, OllamaEnvelopeKeyOrderAndEntropyConfidence) {
  MockServer server(MockProfile::ollama);
  server.set_models({"nimble", "nimble:latest"});
  const auto response = post(server, tv1_request);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.header("content-type").rfind("application/json", 0), 0u);
  EXPECT_TRUE(response.header("x-request-id").empty());  // Ollama sends no request id
  const Json body = Json::parse(response.body);
  EXPECT_EQ(keys_of(body), (std::vector<std::string>{"model", "answers", "usage"}));
  EXPECT_EQ(body["model"], "nimble");
  const Json& label = body["answers"]["label"];
  EXPECT_EQ(keys_of(label),
            (std::vector<std::string>{"type", "choice", "probabilities", "confidence"}));
  // Go marshals a map with its keys sorted, not in criteria order.
  EXPECT_EQ(keys_of(label["probabilities"]),
            (std::vector<std::string>{"account", "billing", "bug"}));
  std::vector<double> p;
  for (const auto& item : label["probabilities"].items()) p.push_back(item.value().get<double>());
  double sum = 0;
  for (double x : p) sum += x;
  EXPECT_NEAR(sum, 1, 1e-9);  // unrounded
  EXPECT_NEAR(label["confidence"].get<double>(), entropy_confidence(p), 1e-9);
  EXPECT_EQ(keys_of(body["usage"]), (std::vector<std::string>{"input_tokens", "output_tokens"}));
  EXPECT_EQ(body["usage"]["output_tokens"], 0);
}

TEST(MockVectors, OllamaReplaysTheCardsPublishedAnswer) {
  MockServer server(MockProfile::ollama);
  const auto response = post(server, tv3_request);
  ASSERT_EQ(response.status, 200) << response.body;
  const Json answers = Json::parse(response.body)["answers"];
  EXPECT_EQ(keys_of(answers), (std::vector<std::string>{"team", "refund", "urgency"}));
  EXPECT_EQ(answers["team"]["choice"], "billing");
  EXPECT_DOUBLE_EQ(answers["team"]["probabilities"]["billing"].get<double>(), 0.9764);
  EXPECT_DOUBLE_EQ(answers["team"]["probabilities"]["technical"].get<double>(), 0.0128);
  EXPECT_DOUBLE_EQ(answers["refund"]["noul"].get<double>(), 0.9989);
  EXPECT_EQ(keys_of(answers["refund"]),
            (std::vector<std::string>{"type", "noul"}));  // no confidence
  // Ollama's score answer has no legend; its probabilities are keyed "0"…"N-1".
  EXPECT_FALSE(answers["urgency"].contains("legend"));
  EXPECT_EQ(keys_of(answers["urgency"]["probabilities"]),
            (std::vector<std::string>{"0", "1", "2"}));
}

TEST(MockVectors, OllamaErrorBodiesAndRefusals) {
  MockServer server(MockProfile::ollama);
  // TV-2, byte for byte.
  const std::string big = std::string(R"({"model":"clef-flash","state":")") +
                          std::string(70000, 'x') +
                          R"(","questions":{"u":{"type":"noul","instructions":"U?"}}})";
  const auto too_big = post(server, big);
  EXPECT_EQ(too_big.status, 413);
  EXPECT_EQ(too_big.body, R"({"error":"request body must not exceed 64 KiB without images"})");
  // A model that is not pulled: 404, JSON.
  const auto missing =
      post(server,
           R"({"model":"nope","state":"x","questions":{"u":{"type":"noul","instructions":"U?"}}})");
  EXPECT_EQ(missing.status, 404);
  EXPECT_TRUE(Json::parse(missing.body).contains("error"));
  // A model that cannot decide: 400.
  const auto chat = post(
      server,
      R"({"model":"llama3","state":"x","questions":{"u":{"type":"noul","instructions":"U?"}}})");
  EXPECT_EQ(chat.status, 400) << chat.body;
  // An MLX or Safetensors tag, even a pulled one: 400 (protocol.md; the Clef-Flash card).
  server.set_models({"clef-flash", "clef-flash:latest", "clef-flash:mlx-q4"});
  const auto mlx = post(
      server,
      R"({"model":"clef-flash:mlx-q4","state":"x","questions":{"u":{"type":"noul","instructions":"U?"}}})");
  EXPECT_EQ(mlx.status, 400) << mlx.body;
  EXPECT_NE(mlx.body.find("MLX"), std::string::npos) << mlx.body;
  // An Ollama too old for System One: Go's plain-text not-found page.
  server.set_version("0.35.0");
  const auto old = post(server, tv3_request);
  EXPECT_EQ(old.status, 404);
  EXPECT_EQ(old.body, "404 page not found");
  EXPECT_EQ(old.header("content-type").rfind("text/plain", 0), 0u);
}

TEST(MockVectors, WorkersAiEnvelopeRoundingAndRequestId) {
  MockServer server(MockProfile::workers_ai);
  const std::string path = "/client/v4/accounts/acc/ai/run/@cf/cloudflare/clef-flash";
  const clef::Headers auth = {{"Content-Type", "application/json"},
                              {"Authorization", "Bearer test-token"}};
  // TV-12's request.
  const std::string request =
      R"({"model":"clef-flash","state":"Checkout has been failing for every customer for the last hour.","questions":{"urgent":{"type":"noul","instructions":"Is this support request urgent?"},"team":{"type":"choice","instructions":"Which team?","criteria":{"billing":"Payments","technical":"Outages and errors","sales":"Plans"}},"severity":{"type":"score","instructions":"How severe?","criteria":["No impact","Minor","Major","Critical"]}}})";
  const auto response = post(server, request, path, auth);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_FALSE(response.header("cf-ai-req-id").empty());
  const Json body = Json::parse(response.body);
  EXPECT_EQ(keys_of(body), (std::vector<std::string>{"result", "success", "errors", "messages"}));
  EXPECT_EQ(body["success"], true);
  const Json& result = body["result"];
  EXPECT_EQ(keys_of(result), (std::vector<std::string>{"model", "answers", "usage"}));
  EXPECT_EQ(keys_of(result["answers"]), (std::vector<std::string>{"urgent", "team", "severity"}));
  EXPECT_EQ(keys_of(result["answers"]["urgent"]), (std::vector<std::string>{"type", "noul"}));
  const Json& team = result["answers"]["team"];
  // JS keeps insertion order: criteria order, 4 decimals.
  EXPECT_EQ(keys_of(team["probabilities"]),
            (std::vector<std::string>{"billing", "technical", "sales"}));
  for (const auto& item : team["probabilities"].items())
    EXPECT_TRUE(rounded_to(item.value().get<double>(), 4)) << item.value();
  const Json& severity = result["answers"]["severity"];
  EXPECT_EQ(keys_of(severity),
            (std::vector<std::string>{"type", "score", "legend", "probabilities", "confidence"}));
  EXPECT_EQ(severity["legend"],
            Json::parse(R"({"0":"No impact","1":"Minor","2":"Major","3":"Critical"})"));
  EXPECT_TRUE(rounded_to(severity["score"].get<double>(), 4));
  EXPECT_EQ(result["usage"]["output_tokens"], 0);

  // TV-15: the unsuccessful envelope's shape, and the token check first.
  const auto refused = post(server, request, path, {{"Content-Type", "application/json"}});
  EXPECT_EQ(refused.status, 401);
  const Json error = Json::parse(refused.body);
  EXPECT_EQ(keys_of(error), (std::vector<std::string>{"errors", "success", "result", "messages"}));
  EXPECT_EQ(keys_of(error["errors"][0]), (std::vector<std::string>{"message", "code"}));
  EXPECT_EQ(error["errors"][0]["code"], 10000);
  EXPECT_EQ(error["result"], Json::object());
}

TEST(MockVectors, TypeSafeTwoDecimalsAndItsModel) {
  MockServer server(MockProfile::typesafe);
  // TV-5's request.
  const auto response = post(
      server,
      R"({"state":"Help! My payouts have been failing for 3 days.","model":"jev-latest","questions":{"is_urgent":{"type":"noul","instructions":"Does this convey urgency?"},"frustration":{"type":"score","instructions":"How frustrated is the customer?","criteria":["Calm","Frustrated","Very angry"]}}})");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_FALSE(response.header("x-typesafe-request-id").empty());
  const Json body = Json::parse(response.body);
  EXPECT_EQ(body["model"], "jev-1.13.0");
  EXPECT_TRUE(rounded_to(body["answers"]["is_urgent"]["noul"].get<double>(), 2));
  const Json& frustration = body["answers"]["frustration"];
  EXPECT_EQ(frustration["legend"],
            Json::parse(R"({"0":"Calm","1":"Frustrated","2":"Very angry"})"));
  for (const auto& item : frustration["probabilities"].items())
    EXPECT_TRUE(rounded_to(item.value().get<double>(), 2)) << item.value();
  EXPECT_GT(body["usage"]["output_tokens"].get<int>(), 0);  // TypeSafe counts output tokens
  // Its 422 is FastAPI's list of {loc, msg, type}.
  const auto invalid = post(
      server, R"({"model":"jev-latest","questions":{"u":{"type":"noul","instructions":"U?"}}})");
  EXPECT_EQ(invalid.status, 422);
  const Json detail = Json::parse(invalid.body)["detail"];
  ASSERT_TRUE(detail.is_array());
  EXPECT_EQ(keys_of(detail[0]), (std::vector<std::string>{"loc", "msg", "type"}));
}

TEST(MockVectors, LlamaCppInvariantsAndRefusals) {
  MockServer server(MockProfile::llamacpp);
  // TV-16's request and its asserted properties.
  const auto response = post(
      server,
      R"({"state":"I was charged twice for my order last week and nobody has replied.","questions":{"route":{"type":"choice","instructions":"Which team should handle this?","criteria":{"billing":"payments and refunds","shipping":null,"technical":null}},"urgency":{"type":"score","instructions":"How urgent is this?","criteria":["can wait","this week","today","right now"]},"angry":{"type":"noul","instructions":"Is the customer angry?"}}})");
  ASSERT_EQ(response.status, 200) << response.body;
  const Json body = Json::parse(response.body);
  EXPECT_EQ(keys_of(body["answers"]), (std::vector<std::string>{"route", "urgency", "angry"}));
  const Json& route = body["answers"]["route"];
  EXPECT_EQ(keys_of(route["probabilities"]),
            (std::vector<std::string>{"billing", "shipping", "technical"}));
  double sum = 0, best = -1;
  std::string argmax;
  for (const auto& item : route["probabilities"].items()) {
    sum += item.value().get<double>();
    if (item.value().get<double>() > best) best = item.value().get<double>(), argmax = item.key();
  }
  EXPECT_NEAR(sum, 1, 1e-4);
  EXPECT_EQ(route["choice"], argmax);
  EXPECT_EQ(body["answers"]["urgency"]["legend"],
            Json::parse(R"({"0":"can wait","1":"this week","2":"today","3":"right now"})"));
  double expected = 0;
  int level = 0;
  for (const auto& item : body["answers"]["urgency"]["probabilities"].items())
    expected += level++ * item.value().get<double>();
  EXPECT_NEAR(body["answers"]["urgency"]["score"].get<double>(), expected, 1e-9);
  EXPECT_FALSE(body["answers"]["angry"].contains("confidence"));
  EXPECT_EQ(keys_of(body["usage"]), (std::vector<std::string>{"input_tokens", "output_tokens"}));
  EXPECT_EQ(body["usage"]["output_tokens"], 0);

  // Invalid bodies: 422 unprocessable_entity_error, each one.
  const std::string q = R"("questions":{"u":{"type":"noul","instructions":"U?"}})";
  std::vector<std::string> invalid = {
      "{" + q + "}",
      R"({"state":"x"})",
      R"({"state":"x","questions":{}})",
      R"({"state":"x","model":123,)" + q + "}",
      R"({"state":"x","questions":{"u":{"type":"unknown","instructions":"U?"}}})",
      R"({"state":"x","questions":{"u":{"type":"choice","instructions":"U?"}}})",
      R"({"state":"x","questions":{"u":{"type":"choice","instructions":"U?","criteria":{}}}})",
      R"({"state":"x","questions":{"u":{"type":"score","instructions":"U?","criteria":["a"]}}})",
      R"({"state":"x","questions":{"u":{"type":"score","instructions":"U?","criteria":["a","b","c","d","e","f","g","h","i","j","k"]}}})"};
  for (const char* instructions : {R"("")", "{}", "[]", "0", "1.5", "false", "true", "null"}) {
    invalid.push_back(
        std::string(R"({"state":"x","questions":{"u":{"type":"noul","instructions":)") +
        instructions + "}}}");
  }
  for (const auto& body_text : invalid) {
    const auto refused = post(server, body_text);
    EXPECT_EQ(refused.status, 422) << body_text << " → " << refused.body;
    const Json error = Json::parse(refused.body, nullptr, false);
    EXPECT_EQ(error.is_object() && error.contains("error") && error["error"].is_object()
                  ? error["error"].value("type", "")
                  : "",
              "unprocessable_entity_error")
        << body_text << " → " << refused.body;
  }
  // Malformed JSON and an empty body: 400.
  for (const std::string& body_text : {std::string("{\"state\":"), std::string()}) {
    EXPECT_EQ(post(server, body_text).status, 400) << body_text;
  }
}

TEST(MockVectors, OllayaKeyOrderAndItsErrors) {
  MockServer server(MockProfile::ollaya);
  server.set_models({"laya"});
  // TV-17's request.
  const auto response = post(
      server,
      R"({"model":"laya","state":{"subject":"Invoice","message":"Can I get an invoice for last month?"},"questions":{"intent":{"type":"choice","instructions":"What does the customer want?","criteria":{"invoice":"Needs an invoice or receipt","refund":"Wants money back","other":"Anything else"}},"billing":{"type":"noul","instructions":"Is this message about billing?"}}})");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_FALSE(response.header("x-typesafe-request-id").empty());
  const Json intent = Json::parse(response.body)["answers"]["intent"];
  // ollaya writes the confidence before the probabilities.
  EXPECT_EQ(keys_of(intent),
            (std::vector<std::string>{"type", "choice", "confidence", "probabilities"}));
  for (const auto& item : intent["probabilities"].items())
    EXPECT_TRUE(rounded_to(item.value().get<double>(), 4)) << item.value();
  const auto invalid =
      post(server, R"({"model":"laya","questions":{"u":{"type":"noul","instructions":"U?"}}})");
  EXPECT_EQ(invalid.status, 422);
  const Json error = Json::parse(invalid.body);
  EXPECT_EQ(keys_of(error), (std::vector<std::string>{"error", "code", "detail"}));
  EXPECT_EQ(error["code"], "INVALID_REQUEST");
  // Busy: 503 QUEUE_FULL with Retry-After.
  clef::MockFaults busy;
  busy.fail_rates = {{503, 1.0}};
  busy.retry_after_seconds = 1;
  server.set_faults(busy);
  const auto full =
      post(server,
           R"({"model":"laya","state":"x","questions":{"u":{"type":"noul","instructions":"U?"}}})");
  EXPECT_EQ(full.status, 503);
  EXPECT_EQ(Json::parse(full.body)["code"], "QUEUE_FULL");
  EXPECT_EQ(full.header("retry-after"), "1");
}

TEST(MockVectors, LayaAddsActionAndRoutingAndMostLikelyFirst) {
  MockServer server(MockProfile::laya);
  const auto response = post(server, tv3_request);
  ASSERT_EQ(response.status, 200) << response.body;
  const Json body = Json::parse(response.body);
  EXPECT_TRUE(body.contains("action"));
  EXPECT_TRUE(body.contains("routing"));
  double previous = 2;
  for (const auto& item : body["answers"]["team"]["probabilities"].items()) {
    EXPECT_LE(item.value().get<double>(), previous);
    previous = item.value().get<double>();
  }
  const auto invalid = post(
      server, R"({"model":"clef-flash","questions":{"u":{"type":"noul","instructions":"U?"}}})");
  EXPECT_EQ(invalid.status, 422);
  EXPECT_TRUE(Json::parse(invalid.body)["detail"].is_string());
}

}  // namespace
