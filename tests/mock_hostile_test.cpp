// clef::MockServer used as a hostile or careless client would (issue 15, items 1-6): rules on
// long states and catastrophic patterns, deep and mistyped bodies, a log that must not grow
// with traffic, a busy port, untagged model names, cassettes with framing headers, slow clients.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "clef/cassette.hpp"
#include "clef/json.hpp"
#include "clef/mock.hpp"
#include "clef/transport.hpp"

namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

const clef::MockProfile every_profile[] = {
    clef::MockProfile::ollama,   clef::MockProfile::workers_ai, clef::MockProfile::typesafe,
    clef::MockProfile::llamacpp, clef::MockProfile::laya,       clef::MockProfile::ollaya};

/// The member every error body of the profile has at its top level.
const char* error_key(clef::MockProfile profile) {
  switch (profile) {
    case clef::MockProfile::workers_ai:
      return "errors";
    case clef::MockProfile::typesafe:
    case clef::MockProfile::laya:
      return "detail";
    default:
      return "error";
  }
}

struct Answer {
  int status = 0;  ///< 0: no complete response (see error)
  std::string body;
  Json json;  ///< the body, when it is JSON
  clef::Headers headers;
  std::string error;
  std::chrono::milliseconds took{0};
};

Answer send(clef::HttpRequest request) {
  static const auto transport = clef::make_curl_transport();
  request.total_timeout = 30s;
  request.max_response_bytes = 1u << 20;
  const auto start = Clock::now();
  auto response = transport->send(request);
  Answer out;
  out.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  if (!response) {
    out.error = response.error().to_string();
    return out;
  }
  out.status = response->status;
  out.body = response->body;
  out.headers = response->headers;
  out.json = Json::parse(out.body, nullptr, false);
  return out;
}

/// A decision request for `profile`'s route (Workers AI: its URL and token).
Answer post_decision(const clef::MockServer& server, clef::MockProfile profile,
                     const std::string& body) {
  clef::HttpRequest request;
  request.url = server.base_url() + "/v1/systemone";
  if (profile == clef::MockProfile::workers_ai) {
    request.url = server.base_url() + "/client/v4/accounts/acc/ai/run/@cf/cloudflare/clef-flash";
    request.headers.emplace_back("Authorization", "Bearer test-token");
  }
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = body;
  return send(request);
}

Answer get(const clef::MockServer& server, const std::string& path) {
  clef::HttpRequest request;
  request.method = "GET";
  request.url = server.base_url() + path;
  return send(request);
}

/// {"model", "state", "questions": {"refund": yes/no}} with `state` as given (JSON text).
std::string refund_body(const std::string& state_json, const std::string& model = "clef-flash") {
  return R"({"model":")" + model + R"(","state":)" + state_json +
         R"(,"questions":{"refund":{"type":"noul","instructions":"Money back?"}}})";
}

double refund_answer(const Answer& answer) {
  const Json& json = answer.json.contains("result") ? answer.json["result"] : answer.json;
  return json["answers"]["refund"]["noul"].get<double>();
}

std::vector<clef::MockRule> rules(const std::string& text) {
  auto parsed = clef::parse_mock_rules(text);
  EXPECT_TRUE(parsed) << parsed.error().to_string();
  return parsed ? parsed.value() : std::vector<clef::MockRule>{};
}

/// Why parse_mock_rules refuses `text` (a failure of the test when it does not).
clef::Error refusal(const std::string& text) {
  auto parsed = clef::parse_mock_rules(text);
  EXPECT_FALSE(parsed) << "accepted: " << text.substr(0, 200);
  if (parsed) return {};
  EXPECT_EQ(parsed.error().kind, clef::ErrorKind::invalid_input);
  return parsed.error();
}

/// A state nested `depth` arrays deep, as JSON text.
std::string nested(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// Item 1: std::regex recursed once per character of the state; 30 KB overflowed the stack.
TEST(Mock, ARuleAnswersOnLongStates) {
  const auto charged_twice = rules(
      R"({"rules": [{"question": "refund", "match": "charged.*twice", "answer": "yes",
                     "probability": 0.77}]})");
  clef::MockServer ollama;
  ollama.set_rules(charged_twice);
  const std::string email = "I was CHARGED " + std::string(30'000, 'x') + " twice";
  auto answer = post_decision(ollama, clef::MockProfile::ollama, refund_body(Json(email).dump()));
  ASSERT_EQ(answer.status, 200) << answer.error << answer.body;
  EXPECT_DOUBLE_EQ(refund_answer(answer), 0.77);
  EXPECT_LT(answer.took, 5s);

  // Past Ollama's 64 KiB text cap: a server without one, a 1 MB state.
  clef::MockServer typesafe(clef::MockProfile::typesafe);
  typesafe.set_rules(charged_twice);
  const std::string thread = "charged " + std::string(1'000'000, 'y') + " twice";
  answer = post_decision(typesafe, clef::MockProfile::typesafe, refund_body(Json(thread).dump()));
  ASSERT_EQ(answer.status, 200) << answer.error << answer.body;
  EXPECT_DOUBLE_EQ(refund_answer(answer), 0.77);
  EXPECT_LT(answer.took, 5s);
  answer = post_decision(typesafe, clef::MockProfile::typesafe,
                         refund_body(Json(std::string(1'000'000, 'y')).dump()));
  ASSERT_EQ(answer.status, 200) << answer.error;
  EXPECT_NE(refund_answer(answer), 0.77) << "no rule matches: the default model answers";
}

TEST(Mock, ARuleThatAnswersNoOptionIsSaidOnce) {
  // Found by an outside pass: such a rule silently gave the mock's own answer.
  clef::MockServer server;
  server.set_rules(
      rules(R"({"rules": [{"question": "refund", "match": "charged", "answer": "maybe"}]})"));
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    auto answer = post_decision(server, clef::MockProfile::ollama,
                                refund_body(Json("charged twice " + std::to_string(i)).dump()));
    EXPECT_EQ(answer.status, 200) << answer.error << answer.body;
  }
  const std::string said = ::testing::internal::GetCapturedStderr();
  const std::string warning =
      "a rule for question \"refund\" answers \"maybe\", none of its options (yes, no)";
  const auto first = said.find(warning);
  EXPECT_NE(first, std::string::npos) << said;
  EXPECT_EQ(said.find(warning, first + 1), std::string::npos) << "said once: " << said;
}

// Item 2: (a+)+$ on "aaaa…ab" backtracked for hours, and 64 of them stopped the server.
TEST(Mock, ACatastrophicPatternAnswersPromptly) {
  clef::MockServer server;
  server.set_rules(rules(R"({"rules": [{"question": "refund", "match": "(a+)+$",
                                        "answer": "yes", "probability": 0.66}]})"));
  std::vector<std::thread> clients;
  std::atomic<int> answered{0};
  for (int i = 0; i < 64; ++i) {
    clients.emplace_back([&] {
      auto answer = post_decision(server, clef::MockProfile::ollama,
                                  refund_body(Json(std::string(40, 'a') + "b").dump()));
      if (answer.status == 200 && refund_answer(answer) != 0.66) ++answered;
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(answered.load(), 64);
  auto matched = post_decision(server, clef::MockProfile::ollama,
                               refund_body(Json(std::string(40, 'a')).dump()));
  ASSERT_EQ(matched.status, 200) << matched.error;
  EXPECT_DOUBLE_EQ(refund_answer(matched), 0.66);
  EXPECT_LT(matched.took, 5s);
}

// Items 1-2: rules are RE2, refused at parse (naming the rule, with RE2's reason) when RE2 has no
// such syntax, and bounded in number, file size and pattern size.
TEST(Mock, RulesAreRE2AndBounded) {
  const std::string good = R"({"question": "q", "match": "refund", "answer": "yes"})";
  auto error = refusal(R"({"rules": [)" + good +
                       R"(, {"question": "q", "match": "(a)\\1", "answer": "yes"}]})");
  EXPECT_EQ(error.where, "rules[1]");
  EXPECT_NE(error.message.find("RE2"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("invalid escape sequence: \\1"), std::string::npos) << error.message;

  error = refusal(R"({"rules": [{"question": "q", "match": "(?=x)y", "answer": "yes"}]})");
  EXPECT_EQ(error.where, "rules[0]");
  EXPECT_NE(error.message.find("invalid perl operator: (?="), std::string::npos) << error.message;

  std::string many = R"({"rules": [)" + good;
  for (std::size_t i = 0; i < clef::max_mock_rules; ++i) many += "," + good;
  error = refusal(many + "]}");
  EXPECT_NE(error.message.find("at most 1000"), std::string::npos) << error.message;
  EXPECT_EQ(error.where, "") << "the file as a whole";

  const std::string long_pattern(clef::MockPattern::max_length + 1, 'a');
  error = refusal(R"({"rules": [{"question": "q", "match": ")" + long_pattern +
                  R"(", "answer": "yes"}]})");
  EXPECT_NE(error.message.find("at most 4096"), std::string::npos) << error.message;

  // Short to write, large to compile: past RE2's memory budget.
  error = refusal(R"({"rules": [{"question": "q", "match": "\\pL{500}", "answer": "y"}]})");
  EXPECT_EQ(error.where, "rules[0]");
  EXPECT_NE(error.message.find("pattern too large"), std::string::npos) << error.message;
  error = refusal(
      R"j({"rules": [{"question": "q", "match": "((((.{100}){100}){100}){100})", "answer": "y"}]})j");
  EXPECT_NE(error.message.find("invalid repetition size"), std::string::npos) << error.message;

  std::string huge = R"({"rules": [)" + good + "]}" + std::string(clef::max_mock_rules_bytes, ' ');
  error = refusal(huge);
  EXPECT_NE(error.message.find("at most 1048576"), std::string::npos) << error.message;

  error = refusal(R"({"rules": )" + nested(100'000) + "}");
  EXPECT_EQ(error.where.rfind("byte ", 0), 0u) << "where the JSON breaks: " << error.where;

  auto unbalanced = clef::MockPattern::compile("(");
  ASSERT_FALSE(unbalanced);
  EXPECT_EQ(unbalanced.error().kind, clef::ErrorKind::invalid_input);
  EXPECT_NE(unbalanced.error().message.find("missing )"), std::string::npos)
      << unbalanced.error().message;
  // RE2's reason quotes the pattern: its control bytes never reach a terminal (outside pass).
  auto titled = clef::MockPattern::compile("\x1b]0;PWN\x07(");
  ASSERT_FALSE(titled);
  EXPECT_EQ(titled.error().message.find_first_of("\x1b\x07"), std::string::npos)
      << titled.error().message;
  // A key no rule has was a rule silently at its defaults ("probabilty": 0.9 then).
  error = refusal(
      R"({"rules": [{"question": "q", "match": "a", "answer": "yes", "probabilty": 0.5}]})");
  EXPECT_EQ(error.where, "rules[0]");
  EXPECT_NE(error.message.find("has no \"probabilty\" key"), std::string::npos) << error.message;
  EXPECT_TRUE(clef::MockPattern::compile("REFUND|charg")->found_in("Please refund me"));
  EXPECT_FALSE(clef::MockPattern::compile("^refund$")->found_in("refund\nnow"));
  EXPECT_TRUE(clef::MockPattern().found_in("anything"));
}

// Item 3: a state nested 10^6 deep with an image (no size cap), or 2x10^5 deep on TypeSafe,
// killed the mock in a recursive dump(). Past the client's own bound it is each server's 400.
TEST(Mock, DeepBodiesGetTheProfilesInvalidJsonAnswer) {
  const std::string log = ::testing::TempDir() + "mock_deep.log.jsonl";
  std::remove(log.c_str());
  for (const auto profile : every_profile) {
    SCOPED_TRACE(clef::cassette_tag(profile) + std::string(" profile ") +
                 std::to_string(static_cast<int>(profile)));
    clef::MockServer server(profile);
    ASSERT_TRUE(server.set_log(log));
    // An image lifts Ollama's text cap (an empty "images" list does not), so the deep body is
    // read.
    std::string deep = refund_body(nested(1'000'000));
    deep.insert(deep.size() - 1, R"(,"images":["iVBORw0KGgo="])");
    // 20,000 deep fits Ollama's 64 KiB text cap; 200,000 deep without images does not, and
    // the size is refused first there (413), as Ollama reads no more than its cap.
    const bool capped = profile == clef::MockProfile::ollama;
    for (const auto& [body, status] : std::vector<std::pair<std::string, int>>{
             {deep, 400},
             {refund_body(nested(20'000)), 400},
             {refund_body(nested(200'000)), capped ? 413 : 400}}) {
      auto answer = post_decision(server, profile, body);
      EXPECT_EQ(answer.status, status) << answer.error;
      EXPECT_TRUE(answer.json.is_object() && answer.json.contains(error_key(profile)))
          << answer.body;
    }
    // The client's bound exactly: the body's object is level 1, the state fills the rest.
    auto at_bound = post_decision(server, profile, refund_body(nested(clef::max_json_depth - 1)));
    EXPECT_EQ(at_bound.status, 200) << at_bound.error << at_bound.body;
    auto past = post_decision(server, profile, refund_body(nested(clef::max_json_depth)));
    EXPECT_EQ(past.status, 400) << past.body;
    EXPECT_NE(past.body.find("nests deeper than 256"), std::string::npos) << past.body;
  }
  std::ifstream lines(log);
  int logged = 0;
  for (std::string line; std::getline(lines, line); ++logged) {
    EXPECT_FALSE(Json::parse(line, nullptr, false).is_discarded());
  }
  EXPECT_EQ(logged, 6 * 5);
}

// Item 6: value("model", "") threw type_error on `"model": 5`: an empty 500 where real servers
// send their 400 (or 422) body.
TEST(Mock, WrongJsonTypesGetTheProfilesErrorBody) {
  const std::string question = R"({"type":"noul","instructions":"Money back?"})";
  const std::vector<std::string> bodies = {
      R"({"model":5,"state":"x","questions":{"refund":)" + question + "}}",
      R"({"model":["clef-flash"],"state":"x","questions":{"refund":)" + question + "}}",
      R"({"model":"clef-flash","state":"x","questions":{"refund":{"type":5,"instructions":"I"}}})",
      R"({"model":"clef-flash","state":"x","questions":{"refund":{"type":null}}})",
      R"({"model":"clef-flash","state":"x","questions":{"r":{"type":"noul","instructions":5}}})",
      R"({"model":"clef-flash","state":"x","questions":{"r":{"type":"choice","instructions":"I","criteria":"ab"}}})",
      R"({"model":"clef-flash","state":"x","questions":{"r":{"type":"score","instructions":"I","criteria":{"a":1}}}})",
      R"({"model":"clef-flash","state":"x","questions":[)" + question + "]}",
      R"({"model":"clef-flash","state":"x","questions":{"refund":)" + question +
          R"(},"images":[5]})",
      R"({"model":"clef-flash","state":"x","questions":{"refund":)" + question +
          R"(},"images":"a"})",
      R"({"model":"clef-flash","state":"x","questions":{"refund":)" + question +
          R"(},"keep_alive":[]})",
      R"([1, 2])",
      R"("just a string")"};
  for (const auto profile : every_profile) {
    clef::MockServer server(profile);
    for (const auto& body : bodies) {
      if (profile != clef::MockProfile::ollama && body.find("keep_alive") != std::string::npos)
        continue;  // the others ignore fields they do not know
      auto answer = post_decision(server, profile, body);
      SCOPED_TRACE(std::to_string(static_cast<int>(profile)) + ": " + body);
      EXPECT_TRUE(answer.status == 400 || answer.status == 422) << answer.status << answer.error;
      EXPECT_TRUE(answer.json.is_object() && answer.json.contains(error_key(profile)))
          << answer.body;
    }
  }
  clef::MockServer server;
  for (const std::string body : {R"({"model":5})", R"({"name":{}})", "[", R"([1])"}) {
    clef::HttpRequest show;
    show.url = server.base_url() + "/api/show";
    show.body = body;
    auto answer = send(show);
    EXPECT_EQ(answer.status, 400) << body << ": " << answer.error;
    EXPECT_TRUE(answer.json.contains("error")) << answer.body;
  }
}

// Item 6: Ollama names "clef" "clef:latest"; the mock listed nothing and served only "clef".
TEST(Mock, UntaggedModelsAreListedAndServedAsLatest) {
  clef::MockServer server;
  server.set_models({"clef"});
  auto tags = get(server, "/api/tags");
  ASSERT_EQ(tags.status, 200) << tags.error;
  std::vector<std::string> names;
  for (const auto& model : tags.json["models"]) names.push_back(model["name"].get<std::string>());
  EXPECT_EQ(names, (std::vector<std::string>{"clef:latest", "llama3:latest"}));
  for (const std::string model : {"clef", "clef:latest"}) {
    auto answer = post_decision(server, clef::MockProfile::ollama, refund_body(R"("x")", model));
    EXPECT_EQ(answer.status, 200) << model << ": " << answer.body;
  }
  EXPECT_EQ(
      post_decision(server, clef::MockProfile::ollama, refund_body(R"("x")", "clef:9b")).status,
      404);
  clef::HttpRequest show;
  show.url = server.base_url() + "/api/show";
  show.body = R"({"model":"clef"})";
  auto shown = send(show);
  ASSERT_EQ(shown.status, 200) << shown.body << shown.error;
  EXPECT_NE(shown.body.find("decision"), std::string::npos);
  // Only Ollama has an /api.
  clef::MockServer typesafe(clef::MockProfile::typesafe);
  EXPECT_EQ(get(typesafe, "/api/tags").status, 404);
  // A rule for "clef:latest" covers requests for "clef", and the other way round.
  server.set_rules(rules(R"({"rules": [{"model": "clef:latest", "question": "refund",
                                        "match": "x", "answer": "yes", "probability": 0.61}]})"));
  EXPECT_DOUBLE_EQ(refund_answer(post_decision(server, clef::MockProfile::ollama,
                                               refund_body(R"("x")", "clef"))),
                   0.61);
}

// Item 6: a cassette's recorded Content-Length and Transfer-Encoding were sent beside the mock's
// own framing: malformed HTTP.
TEST(Mock, ACassettesFramingHeadersAreNotForwarded) {
  const std::string path = ::testing::TempDir() + "mock_framing.cassette.jsonl";
  const std::string request_body = refund_body(R"("recorded")");
  const std::string answer_body =
      R"({"model":"clef-flash","answers":{"refund":{"type":"noul","noul":0.123}}})";
  clef::HttpRequest recorded;
  recorded.url = "http://127.0.0.1:1/v1/systemone";
  recorded.body = request_body;
  Json line = {{"key", clef::exchange_key("ollama", recorded)},
               {"status", 200},
               {"headers", Json::array({Json::array({"Content-Length", "999"}),
                                        Json::array({"transfer-encoding", "chunked"}),
                                        Json::array({"connection", "close"}),
                                        Json::array({"x-request-id", "rec-1"}),
                                        Json::array({"content-type", "application/json"})})},
               {"body", answer_body}};
  std::ofstream(path) << line.dump() << "\n";
  clef::MockServer server;
  const clef::Status cassette = server.set_cassette(path);
  ASSERT_TRUE(cassette) << cassette.error().to_string();
  for (int i = 0; i < 3; ++i) {  // on one kept-alive connection
    auto answer = post_decision(server, clef::MockProfile::ollama, request_body);
    ASSERT_EQ(answer.status, 200) << answer.error;
    EXPECT_EQ(answer.body, answer_body);
    bool chunked = false;
    std::string id, length;
    for (const auto& [name, value] : answer.headers) {
      chunked |= name == "transfer-encoding";
      if (name == "x-request-id") id = value;
      if (name == "content-length") length = value;
    }
    EXPECT_FALSE(chunked);
    EXPECT_EQ(id, "rec-1");
    EXPECT_EQ(length, std::to_string(answer_body.size()));
  }
}

// Item 4: every request was kept for the server's life.
TEST(Mock, TheRequestLogKeepsOnlyTheLastThousand) {
  clef::MockServer server;
  for (int i = 0; i < 1010; ++i) {
    ASSERT_EQ(post_decision(server, clef::MockProfile::ollama,
                            refund_body(Json("ticket " + std::to_string(i)).dump()))
                  .status,
              200);
  }
  const auto kept = server.requests();
  ASSERT_EQ(kept.size(), 1000u);
  EXPECT_NE(kept.front().body.find("\"ticket 10\""), std::string::npos) << kept.front().body;
  EXPECT_NE(kept.back().body.find("\"ticket 1009\""), std::string::npos);
  EXPECT_EQ(server.request_count(), 1010);
}

TEST(Mock, TheRequestLogLimitIsSettable) {
  clef::MockServer server;
  server.set_request_log_limit(2);
  for (int i = 0; i < 5; ++i) {
    post_decision(server, clef::MockProfile::ollama, refund_body(Json(std::to_string(i)).dump()));
  }
  auto kept = server.requests();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(Json::parse(kept[0].body)["state"], "3");
  server.set_request_log_limit(0);
  post_decision(server, clef::MockProfile::ollama, refund_body("1"));
  EXPECT_TRUE(server.requests().empty());
}

// Item 4: a 50 MB body refused with 413 was kept all the same (RSS 9 MB → 849 MB for eight).
TEST(Mock, ABodyRefusedAsTooLargeIsNotKept) {
  const std::string log = ::testing::TempDir() + "mock_large.log.jsonl";
  std::remove(log.c_str());
  clef::MockServer server;
  ASSERT_TRUE(server.set_log(log));
  for (const std::size_t size : {std::size_t{100'000}, std::size_t{50'000'000}}) {
    auto answer = post_decision(server, clef::MockProfile::ollama,
                                refund_body('"' + std::string(size, 'z') + '"'));
    EXPECT_EQ(answer.status, 413) << answer.error;
    EXPECT_TRUE(answer.json.contains("error")) << answer.body;
    ASSERT_FALSE(server.requests().empty());
    EXPECT_TRUE(server.requests().back().body.empty());
  }
  // Past the 64 MiB cap: refused from its Content-Length, with the profile's body, never read.
  auto over = post_decision(server, clef::MockProfile::ollama,
                            refund_body('"' + std::string(65u << 20, 'z') + '"'));
  EXPECT_EQ(over.status, 413) << over.error;
  EXPECT_NE(over.body.find("64 MiB"), std::string::npos) << over.body;
  EXPECT_EQ(server.requests().size(), 2u);
  std::ifstream lines(log);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_LT(line.size(), 2000u);
  EXPECT_TRUE(Json::parse(line)["body"].is_null()) << line.substr(0, 200);
}

// Issue 29: "images": [] or [""] carries no image, so it lifts no cap.
TEST(Mock, AnEmptyImagesListDoesNotLiftOllamasTextCap) {
  clef::MockServer server;
  const std::string state = Json(std::string(100'000, 'z')).dump();
  const std::string question = R"(,"questions":{"refund":{"type":"noul","instructions":"?"}})";
  for (const char* images : {R"([])", R"([""])", R"([null])", R"([1])", R"("x")", R"({})"}) {
    auto answer = post_decision(server, clef::MockProfile::ollama,
                                R"({"model":"clef-flash","images":)" + std::string(images) +
                                    R"(,"state":)" + state + question + "}");
    EXPECT_EQ(answer.status, 413) << images << ": " << answer.body.substr(0, 200);
  }
}

// Issue 29: a thousand rules RE2 cannot run as a DFA (a[a-c]{29}b needs 2^29 states, so RE2
// simulates the program over every byte) took 28 s on a 256 KB state. The work a request's
// rules may cost is bounded: past it, a 400 that says so, at once.
TEST(Mock, TheRulesWorkPerRequestIsBounded) {
  std::string text = R"({"rules": [)";
  for (int i = 0; i < 1000; ++i) {
    text += std::string(i ? "," : "") + R"({"question": "refund", "match": "a[a-c]{)" +
            std::to_string(20 + i % 10) + "}b" + std::to_string(i) + R"(", "answer": "yes"})";
  }
  text += "]}";
  const auto hard = rules(text);
  std::string state(256 * 1024, 'a');
  for (std::size_t i = 0; i < state.size(); i += 3) state[i] = i % 2 ? 'b' : 'c';
  clef::MockServer laya(clef::MockProfile::laya);
  laya.set_rules(hard);
  auto answer = post_decision(laya, clef::MockProfile::laya, refund_body(Json(state).dump()));
  EXPECT_EQ(answer.status, 400) << answer.error;
  EXPECT_NE(
      answer.body.find("over the mock's bound of " + std::to_string(clef::max_mock_rule_work)),
      std::string::npos)
      << answer.body.substr(0, 300);
  // Under the bound the rules answer: the same rules on a short state, a rule for another
  // question costing nothing.
  answer = post_decision(laya, clef::MockProfile::laya,
                         refund_body(Json("a" + std::string(29, 'c') + "b999").dump()));
  ASSERT_EQ(answer.status, 200) << answer.body.substr(0, 300);
  EXPECT_DOUBLE_EQ(refund_answer(answer), 0.9);
  std::uint64_t work = 0;
  for (const auto& rule : hard) work += rule.pattern.program_size();
  EXPECT_GT(work * state.size(), clef::max_mock_rule_work);  // the refusal's own arithmetic
}

/// A listening socket on `port` shared the way cpp-httplib shares it (SO_REUSEPORT)./// A listening
/// socket on `port` shared the way cpp-httplib shares it (SO_REUSEPORT).
int reuseport_listener(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 8) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Item 5: a second server on a busy port started (SO_REUSEPORT) and took part of the traffic.
TEST(Mock, ABusyPortIsRefused) {
  clef::MockServer first;
  auto second = clef::MockServer::start(clef::MockProfile::ollama, first.port());
  ASSERT_FALSE(second) << "a second server listens on " << second->port();
  EXPECT_EQ(second.error().kind, clef::ErrorKind::invalid_input);
  EXPECT_NE(second.error().message.find("127.0.0.1:" + std::to_string(first.port())),
            std::string::npos)
      << second.error().message;
  EXPECT_NE(second.error().message.find("in use"), std::string::npos) << second.error().message;
  // Also when the listener there is an older mock that set SO_REUSEPORT.
  const int port = clef::unused_port();
  const int other = reuseport_listener(port);
  ASSERT_GE(other, 0);
  auto beside = clef::MockServer::start(clef::MockProfile::ollama, port);
  ::close(other);
  ASSERT_FALSE(beside) << "a server listens beside another on " << port;
  EXPECT_NE(beside.error().message.find("in use"), std::string::npos) << beside.error().message;
}

/// A client that connects and sends a request's first bytes, then one byte at a time.
class SlowClient {
 public:
  explicit SlowClient(int port) : m_fd(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    m_connected = ::connect(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~SlowClient() { ::close(m_fd); }
  SlowClient(const SlowClient&) = delete;
  SlowClient& operator=(const SlowClient&) = delete;

  bool connected() const { return m_connected; }
  int fd() const { return m_fd; }
  /// The next byte of "POST /v1/systemone HTTP/1.1\r\nX-Slow: aaaa…"; false once the server
  /// has closed the connection.
  bool trickle() {
    static const std::string head = "POST /v1/systemone HTTP/1.1\r\nX-Slow: ";
    const char byte = m_sent < head.size() ? head[m_sent] : 'a';
    ++m_sent;
    return ::send(m_fd, &byte, 1, MSG_NOSIGNAL) == 1 && !closed_by_server();
  }
  /// True once the server has closed the connection (after any answer it sent, which is read
  /// and dropped), waiting for that at most `within`.
  bool closed_by_server(std::chrono::milliseconds within = 0ms) const {
    const auto until = Clock::now() + within;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      pollfd state{m_fd, POLLIN, 0};
      if (::poll(&state, 1, static_cast<int>(std::max<long long>(left, 0))) != 1) return false;
      char bytes[4096];
      const ssize_t n = ::recv(m_fd, bytes, sizeof bytes, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
    }
  }

 private:
  int m_fd;
  bool m_connected = false;
  std::size_t m_sent = 0;
};

/// Sends each client a byte every `every` until stopped.
class Trickler {
 public:
  Trickler(std::vector<std::unique_ptr<SlowClient>>& clients, std::chrono::milliseconds every)
      : m_thread([this, &clients, every] {
          std::unique_lock<std::mutex> lock(m_mutex);
          do {
            for (auto& client : clients) client->trickle();
          } while (!m_stop.wait_for(lock, every, [this] { return m_stopping; }));
        }) {}
  ~Trickler() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stopping = true;
    }
    m_stop.notify_all();
    m_thread.join();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_stop;
  bool m_stopping = false;
  std::thread m_thread;
};

// Item 6: 70 connections sending a byte every 2.5 s held all 64 threads: nobody else was
// answered while they lasted.
TEST(Mock, SlowClientsDoNotHoldTheServer) {
  clef::MockServer server;
  std::vector<std::unique_ptr<SlowClient>> slow;
  for (int i = 0; i < 70; ++i) {
    slow.push_back(std::make_unique<SlowClient>(server.port()));
    ASSERT_TRUE(slow.back()->connected());
  }
  Trickler trickler(slow, 2500ms);
  const auto until = Clock::now() + 6s;  // two rounds of trickling
  int asked = 0;
  while (Clock::now() < until) {
    auto answer = post_decision(server, clef::MockProfile::ollama, refund_body(R"("ordinary")"));
    ++asked;
    ASSERT_EQ(answer.status, 200) << answer.error;
    ASSERT_LT(answer.took, 2s) << "request " << asked;
  }
  EXPECT_GT(asked, 3);
}

TEST(Mock, ARequestMustArriveWithinTheDeadline) {
  clef::MockServer server;
  server.set_request_deadline(1500ms);
  std::vector<std::unique_ptr<SlowClient>> slow;
  slow.push_back(std::make_unique<SlowClient>(server.port()));
  ASSERT_TRUE(slow.back()->connected());
  const auto start = Clock::now();
  Trickler trickler(slow, 200ms);
  EXPECT_TRUE(slow.back()->closed_by_server(10s));
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 1400ms);
  EXPECT_LT(took, 5s);
}

/// What the server answers to `head` (a request's headers, its body never sent), read until the
/// server closes or 3 s pass.
std::string head_only_answer(int port, const std::string& head) {
  SlowClient client(port);
  EXPECT_TRUE(client.connected());
  EXPECT_EQ(::send(client.fd(), head.data(), head.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(head.size()));
  std::string answer;
  const auto until = Clock::now() + 3s;
  while (Clock::now() < until) {
    pollfd ready{client.fd(), POLLIN, 0};
    if (::poll(&ready, 1, 100) != 1) {
      if (answer.find("\r\n\r\n") != std::string::npos) break;  // quiet after an answer
      continue;
    }
    char buffer[4096];
    const ssize_t n = ::recv(client.fd(), buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  return answer;
}

// From a hostile pass: what no route takes gets each server's own 404; the profiles make the
// request checks protocol.md gives their servers.
TEST(Mock, EachProfileAnswersItsOwnErrorsAndChecks) {
  for (const clef::MockProfile profile : every_profile) {
    clef::MockServer server(profile);
    const Answer nowhere = get(server, "/nope");
    EXPECT_EQ(nowhere.status, 404);
    if (profile == clef::MockProfile::ollama) {
      EXPECT_EQ(nowhere.body, "404 page not found");  // Go's mux
    } else {
      EXPECT_TRUE(nowhere.json.contains(error_key(profile))) << nowhere.body;
    }
    // No question has other fields; a choice's descriptions are strings or null.
    const Answer weighted = post_decision(
        server, profile,
        R"({"model":"clef-flash","state":"x","questions":{"refund":{"type":"noul","instructions":"Money back?","weight":2}}})");
    EXPECT_GE(weighted.status, 400) << weighted.body;
    const Answer numbered = post_decision(
        server, profile,
        R"({"model":"clef-flash","state":"x","questions":{"team":{"type":"choice","instructions":"Which?","criteria":{"a":5,"b":null}}}})");
    EXPECT_GE(numbered.status, 400) << numbered.body;
  }
  // 255 options at most on Workers AI; 101 is past Laya's 100.
  std::string options;
  for (int i = 0; i < 256; ++i)
    options += (i ? "," : "") + std::string("\"o") + std::to_string(i) + "\":null";
  const std::string many =
      R"({"model":"clef-flash","state":"x","questions":{"team":{"type":"choice","instructions":"Which?","criteria":{)" +
      options + "}}}}";
  clef::MockServer workers(clef::MockProfile::workers_ai);
  const Answer too_many = post_decision(workers, clef::MockProfile::workers_ai, many);
  EXPECT_EQ(too_many.status, 400) << too_many.body;
  // Workers AI's names: [A-Za-z0-9_.-]{1,100}.
  const Answer spaced = post_decision(
      workers, clef::MockProfile::workers_ai,
      R"({"model":"clef-flash","state":"x","questions":{"a b":{"type":"noul","instructions":"Money back?"}}})");
  EXPECT_EQ(spaced.status, 400) << spaced.body;
  // A body too large is code 5021 there: said on the headers alone, before any body comes.
  const std::string large = head_only_answer(
      workers.port(),
      "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n");
  EXPECT_NE(large.find(" 413 "), std::string::npos) << large;
  EXPECT_NE(large.find("\"code\":5021"), std::string::npos) << large;
  // TypeSafe's 422 points at the field that is wrong.
  clef::MockServer typesafe(clef::MockProfile::typesafe);
  const Answer model = post_decision(
      typesafe, clef::MockProfile::typesafe,
      R"({"model":5,"state":"x","questions":{"refund":{"type":"noul","instructions":"Money back?"}}})");
  EXPECT_EQ(model.status, 422) << model.body;
  EXPECT_EQ(model.json["detail"][0]["loc"], Json::array({"body", "model"})) << model.body;
}

// From a hostile pass: a request whose body's end cannot be told is refused and its connection
// closed (RFC 9112 6.3), so what follows it is never read as a request of its own.
TEST(Mock, ARequestThatCannotBeFramedIsRefusedAndItsConnectionClosed) {
  clef::MockServer server;
  const std::string smuggled = "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string two_lengths =
      head_only_answer(server.port(),
                       "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                       "Content-Length: " +
                           std::to_string(2 + smuggled.size()) + "\r\n\r\n{}" + smuggled);
  EXPECT_EQ(two_lengths.rfind("HTTP/1.1 400 ", 0), 0u) << two_lengths;
  EXPECT_EQ(two_lengths.find("version"), std::string::npos) << "smuggled: " << two_lengths;
  for (const char* length : {"-5", "2abc", "+2", "2, 2"}) {
    const std::string answer = head_only_answer(
        server.port(), "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                           std::string(length) + "\r\n\r\n{}");
    EXPECT_EQ(answer.rfind("HTTP/1.1 400 ", 0), 0u) << length << ": " << answer;
  }
  // A malformed request line: one 400, then the connection closes (no second answer).
  const std::string garbage = head_only_answer(server.port(), "GARBAGE\r\n\r\n" + smuggled);
  EXPECT_EQ(garbage.rfind("HTTP/1.1 400 ", 0), 0u) << garbage;
  EXPECT_EQ(garbage.find("HTTP/1.1", 1), std::string::npos) << garbage;
}

// From a hostile pass: 100,000 short headers (1.2 MB) took 10 s of a core to parse; a head past
// 64 KiB is refused at once, and its connection closed.
TEST(Mock, AHeadPastItsBudgetIsRefusedAtOnce) {
  clef::MockServer server;
  const auto head_of = [](std::size_t headers) {
    std::string head = "POST /v1/systemone HTTP/1.1\r\nHost: x\r\n";
    for (std::size_t i = 0; i < headers; ++i) head += "X-" + std::to_string(i) + ": a\r\n";
    return head + "Content-Length: 2\r\n\r\n{}";
  };
  const auto started = Clock::now();
  const std::string many = head_only_answer(server.port(), head_of(100000));
  EXPECT_LT(Clock::now() - started, 2s);
  EXPECT_EQ(many.rfind("HTTP/1.1 400 ", 0), 0u) << many.substr(0, 200);
  // Under the budget (5,000 headers, about 50 KB) the request is served as any other.
  const std::string under = head_only_answer(server.port(), head_of(5000));
  EXPECT_EQ(under.rfind("HTTP/1.1 400 ", 0), std::string::npos) << under.substr(0, 200);
  EXPECT_NE(under.rfind("HTTP/1.1 ", 0), std::string::npos) << under.substr(0, 200);
}

}  // namespace
