// The serializer against the published wire examples (../shared/vectors.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "clef/clef.hpp"
#include "util/json_text.hpp"
#include "wire/wire_request.hpp"

namespace {

using clef::Backend;
using clef::DecisionRequest;
using clef::Question;
using Json = nlohmann::ordered_json;

std::string body_of(const DecisionRequest& request, Backend backend = Backend::ollama,
                    const std::string& model = "clef-flash") {
  auto body = clef::detail::serialize_request(request, backend, model);
  EXPECT_TRUE(body.ok()) << (body.ok() ? "" : body.error().to_string());
  return body.ok() ? body.value() : "";
}

clef::Error error_of(const DecisionRequest& request, Backend backend = Backend::ollama) {
  auto body = clef::detail::serialize_request(request, backend, "clef-flash");
  EXPECT_FALSE(body.ok());
  return body.ok() ? clef::Error{} : body.error();
}

/// Compact, order-preserving form of a vector's JSON, for byte comparison modulo whitespace.
std::string compact(const std::string& json_text) {
  return Json::parse(json_text).dump();
}

DecisionRequest card_request() {
  DecisionRequest request;
  request.state =
      clef::State::json(R"({"ticket": "I was charged twice. Please refund the extra payment."})")
          .value();
  request.questions.push_back(Question::choice("team", "Which team should handle this ticket?",
                                               {{"billing", "Payments and refunds"},
                                                {"technical", "Bugs and integrations"},
                                                {"other", "None of the above"}}));
  return request;
}

TEST(Serialize, ClefFlashCardBodyByteForByte) {
  const std::string card = R"({
    "model": "clef-flash",
    "state": {"ticket": "I was charged twice. Please refund the extra payment."},
    "questions": {
      "team": {
        "type": "choice",
        "instructions": "Which team should handle this ticket?",
        "criteria": {
          "billing": "Payments and refunds",
          "technical": "Bugs and integrations",
          "other": "None of the above"
        }
      }
    }
  })";
  EXPECT_EQ(body_of(card_request()), compact(card));
}

TEST(Serialize, Tv3ThreeQuestionTypesInOrder) {
  DecisionRequest request = card_request();
  request.questions.push_back(
      Question::yes_no("refund", "Does the customer explicitly ask for a refund?"));
  request.questions.push_back(
      Question::score("urgency", "How urgent is this ticket?", {"Routine", "Soon", "Urgent"}));
  const std::string tv3 =
      R"({"model":"nimble","state":{"ticket":"I was charged twice. Please refund the extra payment."},"questions":{"team":{"type":"choice","instructions":"Which team should handle this ticket?","criteria":{"billing":"Payments and refunds","technical":"Bugs and integrations","other":"None of the above"}},"refund":{"type":"noul","instructions":"Does the customer explicitly ask for a refund?"},"urgency":{"type":"score","instructions":"How urgent is this ticket?","criteria":["Routine","Soon","Urgent"]}}})";
  EXPECT_EQ(body_of(request, Backend::ollama, "nimble"), compact(tv3));
}

TEST(Serialize, Tv4NoulCriteriaTextState) {
  DecisionRequest request;
  request.state = clef::State::text("Hello World");
  request.questions.push_back(Question::yes_no(
      "says_hello", "Does the state text contain a greeting?",
      "The state text contains a greeting.", "The state text does not contain a greeting."));
  const std::string tv4 =
      R"({"model":"clef-flash:9b","state":"Hello World","questions":{"says_hello":{"type":"noul","instructions":"Does the state text contain a greeting?","criteria":{"true":"The state text contains a greeting.","false":"The state text does not contain a greeting."}}}})";
  EXPECT_EQ(body_of(request, Backend::ollama, "clef-flash:9b"), compact(tv4));
}

TEST(Serialize, NullDescriptionsAndStateKeyOrderKept) {
  DecisionRequest request;
  request.state =
      clef::State::json(R"({"subject":"Invoice","message":"Can I get one?","a":1})").value();
  request.questions.push_back(Question::choice("route", "Which team should handle this?",
                                               {{"billing", "payments and refunds"},
                                                {"shipping", std::nullopt},
                                                {"technical", std::nullopt}}));
  EXPECT_EQ(
      body_of(request),
      R"({"model":"clef-flash","state":{"subject":"Invoice","message":"Can I get one?","a":1},)"
      R"("questions":{"route":{"type":"choice","instructions":"Which team should handle this?",)"
      R"("criteria":{"billing":"payments and refunds","shipping":null,"technical":null}}}})");
}

TEST(Serialize, KeepAliveNumberAndDuration) {
  DecisionRequest request = card_request();
  request.keep_alive = clef::KeepAlive::parse("300").value();
  EXPECT_NE(body_of(request).find(R"("keep_alive":300})"), std::string::npos);
  request.keep_alive = clef::KeepAlive::parse("1h30m").value();
  EXPECT_NE(body_of(request).find(R"("keep_alive":"1h30m"})"), std::string::npos);
  EXPECT_FALSE(clef::KeepAlive::parse("5 minutes").ok());
  EXPECT_EQ(error_of(request, Backend::workers_ai).where, "keep_alive");
}

TEST(Serialize, ExtraFieldsSentAfterKnownOnesAndCollisionsRefused) {
  DecisionRequest request = card_request();
  request.extra_fields = {{"x_trace", R"({"id": 7})"}};
  const std::string body = body_of(request);
  EXPECT_EQ(body.substr(body.size() - 20), R"(,"x_trace":{"id":7}})");
  request.extra_fields = {{"model", R"("other")"}};
  EXPECT_EQ(error_of(request).where, "model");
  request.extra_fields = {{"x", "{not json"}};
  EXPECT_EQ(error_of(request).kind, clef::ErrorKind::invalid_input);
}

TEST(Serialize, ImagesRawBase64ForOllamaDataUrlForOthers) {
  DecisionRequest request = card_request();
  request.images.push_back(clef::Image::from_bytes(std::string("\xFF\xD8\xFF\xE0", 4)).value());
  EXPECT_NE(body_of(request).find(R"("images":["/9j/4A=="])"), std::string::npos);
  EXPECT_NE(
      body_of(request, Backend::workers_ai).find(R"("images":["data:image/jpeg;base64,/9j/4A=="])"),
      std::string::npos);
  for (int i = 0; i < 4; ++i) request.images.push_back(request.images.front());
  EXPECT_EQ(error_of(request, Backend::workers_ai).where, "images");
}

TEST(Serialize, QuestionRulesNameTheQuestion) {
  struct Case {
    Question question;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {Question::choice("team", "Which?", {{"only", std::nullopt}}), "at least 2 options"},
      {Question::choice("team", "Which?", {{"a", std::nullopt}, {"a", std::nullopt}}),
       "appears twice"},
      {Question::choice("team", "  ", {{"a", std::nullopt}, {"b", std::nullopt}}),
       "instructions are empty"},
      {Question::score("sev", "How bad?", {"low"}), "2 to 10 levels"},
      {Question::score("sev", "How bad?", std::vector<std::string>(11, "x")), "2 to 10 levels"},
      {Question::score("sev", "How bad?", {"low", ""}), "level 1 has no description"},
      {Question::yes_no("bad name!", "Is it?"), "must be 1-100 characters"},
      {Question::yes_no(std::string(101, 'a'), "Is it?"), "must be 1-100 characters"},
  };
  for (const auto& c : cases) {
    DecisionRequest request;
    request.questions = {c.question};
    const clef::Error error = error_of(request);
    EXPECT_EQ(error.kind, clef::ErrorKind::invalid_input);
    EXPECT_NE(error.message.find(c.fragment), std::string::npos) << error.message;
    EXPECT_EQ(error.where, "questions." + c.question.name);
  }
}

TEST(Serialize, QuestionSetLimits) {
  DecisionRequest request;
  EXPECT_NE(error_of(request).message.find("at least one question"), std::string::npos);
  for (int i = 0; i < 65; ++i)
    request.questions.push_back(Question::yes_no("q" + std::to_string(i), "Is it?"));
  EXPECT_NE(error_of(request).message.find("at most 64"), std::string::npos);
  request.questions = {Question::yes_no("q", "Is it?"), Question::yes_no("q", "Again?")};
  EXPECT_NE(error_of(request).message.find("used twice"), std::string::npos);
}

TEST(Serialize, StateMustBeObjectOrArrayAndValidUtf8) {
  EXPECT_FALSE(clef::State::json("42").ok());
  EXPECT_FALSE(clef::State::json("null").ok());
  auto broken = clef::State::json(R"({"a": )");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().where, "state, byte 6");
  DecisionRequest request = card_request();
  request.state = clef::State::text("caf\xC3");
  EXPECT_EQ(error_of(request).where, "state");
}

TEST(Serialize, StateFromOrderedJsonKeepsOrder) {
  Json state;
  state["zeta"] = 1;
  state["alpha"] = 2;
  EXPECT_EQ(clef::State::from_json_value(state).value().wire_json(), R"({"zeta":1,"alpha":2})");
}

}  // namespace

namespace {

TEST(Serialize, EmptyStatesAreRefused) {
  DecisionRequest request;  // default-constructed: its state is empty text
  request.questions.push_back(Question::yes_no("refund", "Refund?"));
  for (auto state : {clef::State::text(""), clef::State::text(" \n\t"),
                     clef::State::json("{}").value(), clef::State::json("[]").value()}) {
    request.state = state;
    const clef::Error error = error_of(request);
    EXPECT_EQ(error.message, "the state is empty: there is nothing to judge");
    EXPECT_EQ(error.where, "state");
  }
  DecisionRequest fresh;
  fresh.questions = request.questions;
  EXPECT_EQ(error_of(fresh).where, "state");
  request.state = clef::State::text("x");
  EXPECT_FALSE(body_of(request).empty());
}

}  // namespace

// Long texts, mostly plain bytes, are written eight bytes at a time up to the next byte that is
// not plain: every offset of every kind of byte in a run, against nlohmann's dump.
TEST(JsonString, RunsOfPlainBytesAreWrittenAsNlohmannWritesThem) {
  std::mt19937 random(20261207);
  const std::vector<std::string> awkward = {
      "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
      " ",  "~",  "/"};
  for (int round = 0; round < 100000; ++round) {
    std::string text;
    const std::size_t length = random() % 48;
    while (text.size() < length) {
      if (random() % 8 == 0)
        text += awkward[random() % awkward.size()];
      else
        text += static_cast<char>('a' + random() % 26);
    }
    const std::string expected = nlohmann::json(text).dump();
    std::string out = "prefix";
    ASSERT_TRUE(clef::detail::append_json_string(out, text, "where"))
        << testing::PrintToString(text);
    ASSERT_EQ(out, "prefix" + expected) << testing::PrintToString(text);
  }
}

// The request's strings are escaped by hand (util/json_text.cpp); nlohmann's dump is the
// reference: the same bytes for every text it accepts, and a refusal for every text it refuses.
TEST(JsonString, WritesWhatNlohmannWritesAndRefusesWhatItRefuses) {
  std::mt19937 random(20261206);
  // Bytes weighted toward the awkward ones: controls, quotes, backslashes, lead and
  // continuation bytes, the bounds of the overlong and surrogate ranges.
  const std::vector<unsigned char> pool = {0x00, 0x01, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F, 0x20,
                                           '"',  '\\', '/',  'a',  0x7F, 0x80, 0x8F, 0x90, 0x9F,
                                           0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
                                           0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  std::size_t accepted = 0, refused = 0;
  for (int round = 0; round < 200000; ++round) {
    std::string text(random() % 6, '\0');
    for (char& c : text) c = static_cast<char>(pool[random() % pool.size()]);
    std::string expected;
    bool valid = true;
    try {
      expected = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    } catch (const nlohmann::json::type_error&) {
      valid = false;
    }
    std::string out = "prefix";
    const clef::Status status = clef::detail::append_json_string(out, text, "where");
    ASSERT_EQ(status.ok(), valid) << testing::PrintToString(text);
    if (valid) {
      ASSERT_EQ(out, "prefix" + expected) << testing::PrintToString(text);
      ++accepted;
    } else {
      ASSERT_EQ(out, "prefix") << "a refused text leaves nothing behind";
      EXPECT_EQ(status.error().where, "where");
      ++refused;
    }
  }
  // Both outcomes were reached often enough to mean something.
  EXPECT_GT(accepted, 20000u);
  EXPECT_GT(refused, 20000u);
  // Every well-formed code point's encoding, at the ranges' edges.
  for (const char* text : {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
                           "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "\xE2\x80\xAE"}) {
    std::string out;
    ASSERT_TRUE(clef::detail::append_json_string(out, text, "").ok()) << text;
    EXPECT_EQ(out, std::string("\"") + text + "\"");
  }
}

// A parsed JSON value keeps an integer wider than 64 bits only as a double: such a state is sent
// as written (compact), so its digits reach the model; every other state as before.
TEST(State, AnIntegerWiderThan64BitsIsSentAsWritten) {
  auto wide = clef::State::json(
      "{\"account\": 123456789012345678901234567890,\n \"below\": -9223372036854775809, "
      "\"f\": 1.5e3, \"s\": \"a 99999999999999999999999 in text\", \"a\": [ 1 , {\"x\" : "
      "\"\\u00e9\"} ]}");
  ASSERT_TRUE(wide.ok()) << wide.error().to_string();
  EXPECT_EQ(
      wide->wire_json(),
      "{\"account\":123456789012345678901234567890,\"below\":-9223372036854775809,"
      "\"f\":1.5e3,\"s\":\"a 99999999999999999999999 in text\",\"a\":[1,{\"x\":\"\\u00e9\"}]}");
  auto body = body_of([&] {
    DecisionRequest request;
    request.state = wide.value();
    request.questions.push_back(Question::yes_no("refund", "Asks for a refund?"));
    return request;
  }());
  EXPECT_NE(body.find("123456789012345678901234567890"), std::string::npos) << body;

  // At the bounds a parsed value holds exactly: written from it, as always.
  auto exact = clef::State::json(
      R"({"top": 18446744073709551615, "bottom": -9223372036854775808, "e": 1e2})");
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->wire_json(),
            R"({"top":18446744073709551615,"bottom":-9223372036854775808,"e":100.0})");

  // As the parser reads it: a leading byte order mark dropped; a key given twice refused (sent
  // as written, each server would pick its own); a NUL byte, which the parser took for the end
  // of its input, refused wherever it is.
  auto bom = clef::State::json("\xEF\xBB\xBF {\"w\": 123456789012345678901234567890}");
  ASSERT_TRUE(bom.ok()) << bom.error().to_string();
  EXPECT_EQ(bom->wire_json(), "{\"w\":123456789012345678901234567890}");
  auto twice =
      clef::State::json(R"({"a": 1, "b": {"a": 2, "\u0061": 123456789012345678901234567890}})");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("the key \"a\" twice"), std::string::npos)
      << twice.error().message;
  for (const std::string& text : {std::string("{\"w\":1}\0garbage", 15),
                                  std::string("{\"w\":123456789012345678901234567890}\n\0", 38)}) {
    auto nul = clef::State::json(text);
    ASSERT_FALSE(nul.ok());
    EXPECT_NE(nul.error().message.find("NUL byte"), std::string::npos) << nul.error().to_string();
  }
  // The member a parser reads under a key, however the key is spelled.
  EXPECT_EQ(clef::member_text(R"({"state": {"a": 1}, "st\u0061te": {"b": 2}})", "state"),
            std::optional<std::string_view>(R"({"b": 2})"));

  EXPECT_TRUE(clef::has_wide_integer("[18446744073709551616]"));
  EXPECT_TRUE(clef::has_wide_integer("{\"a\":-9223372036854775809}"));
  EXPECT_FALSE(clef::has_wide_integer("[18446744073709551615, -9223372036854775808, 1e999999]"));
  EXPECT_FALSE(clef::has_wide_integer(R"({"18446744073709551616": "18446744073709551616"})"));
  EXPECT_FALSE(clef::has_wide_integer("[123456789012345678901234567890.5]"));
}
