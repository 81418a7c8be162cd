// The quick reader of a System One reply (wire/quick_reply.hpp) against the tree reader
// (parse_decision over parse_json): wherever the quick one answers, the two decisions agree to
// the bit; on the published shapes it does answer; on what it leaves, the tree reader decides.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "clef/clef.hpp"
#include "decision_text.hpp"
#include "text_edit.hpp"
#include "wire/quick_reply.hpp"
#include "wire/wire_response.hpp"

namespace {

using clef::Question;

std::vector<Question> questions() {
  return {Question::choice("team", "Which team?",
                           {{"billing", "Money"}, {"technical", std::nullopt}, {"other", "Else"}}),
          Question::yes_no("refund", "Refund?"),
          Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"})};
}

/// The tree reader's decision as read_decision makes it (raw_json the text), or its error.
std::string tree_reading(const std::string& text, const std::vector<Question>& asked) {
  auto json = clef::parse_json(text, "the response body", clef::ErrorKind::invalid_response);
  if (!json) return "error: " + json.error().to_string();
  auto decision = clef::detail::parse_decision(json.value(), text, asked, {});
  if (!decision) return "error: " + decision.error().to_string();
  decision->raw_json = text;
  return clef::test::decision_text(decision.value());
}

std::optional<std::string> quick_reading(const std::string& text,
                                         const std::vector<Question>& asked) {
  auto decision = clef::detail::read_quick_reply(text, asked, {});
  if (!decision) return std::nullopt;
  return clef::test::decision_text(*decision);
}

const char* const published[] = {
    // The mock's own reply, as clef mock writes it.
    R"({"model":"clef-flash","answers":{"team":{"type":"choice","choice":"technical","probabilities":{"billing":0.009303312891275893,"other":0.017709842555254828,"technical":0.9729868445534692},"confidence":0.8711145137101549}},"usage":{"input_tokens":39,"output_tokens":0}})",
    // TV-1's layout: indented, the three types.
    R"({
  "model": "nimble",
  "answers": {
    "team": {"type": "choice", "choice": "billing",
             "probabilities": {"billing": 0.88, "technical": 0.12, "other": 0.0},
             "confidence": 0.6}, "refund": {"type": "noul", "noul": 0.9989},
    "urgency": {"type": "score", "score": 0.8308,
                "probabilities": {"0": 0.3, "1": 0.5692, "2": 0.1308}, "confidence": 0.2}
  },
  "usage": {"input_tokens": 174, "output_tokens": 1}
}
)",
    // Integer probabilities, shuffled keys, no choice or score sent, an unasked answer.
    R"({"answers":{"urgency":{"probabilities":{"2":0,"0":1,"1":0},"type":"score"},"extra":{"type":"noul","noul":2},"team":{"probabilities":{"other":0,"technical":1,"billing":0},"type":"choice"},"refund":{"noul":0,"type":"noul"}},"model":"m"})",
    // Sums off by rounding (rescaled), a tie broken by the server, numbers in exponent form.
    R"({"model":"x","answers":{"team":{"type":"choice","choice":"technical","probabilities":{"billing":0.4995,"technical":0.4995,"other":0.0005}},"urgency":{"type":"score","probabilities":{"0":1E-1,"1":2e-1,"2":0.7001e0},"score":1.6}}})",
    // Members the reader does not use, of every kind, escapes and UTF-8 among them.
    R"({"id":"r\n\u00e9\"1","created":[1,2.5,-3e2,true,false,null,{"a":[]}],"model":"m","answers":{"refund":{"type":"noul","noul":0.25,"reasoning":"caf\u00e9 — \t","confidence":"high"},"team":null},"usage":{"input_tokens":-5,"output_tokens":1.9e30},"note":{}})",
    // A winner that is not the most likely, a sum far from 1, an out-of-range noul: invalid, read.
    R"({"model":"m","answers":{"team":{"type":"choice","choice":"other","probabilities":{"billing":0.7,"technical":0.2,"other":0.1}},"urgency":{"type":"score","probabilities":{"0":0.5,"1":0.1,"2":0.1}},"refund":{"type":"noul","noul":1.5}}})",
    // Minus zero: as an integer the tree reader holds 0 (+0.0), as a fraction -0.0.
    R"({"answers":{"team":{"type":"choice","probabilities":{"billing":-0,"technical":1,"other":-0.0},"confidence":-0}}})",
    // No answers at all; answers empty.
    R"({"model":"m","answers":{}})",
};

TEST(QuickReply, ReadsThePublishedShapesAsTheTreeReaderDoes) {
  for (const char* text : published) {
    const auto quick = quick_reading(text, questions());
    ASSERT_TRUE(quick.has_value()) << text;
    EXPECT_EQ(*quick, tree_reading(text, questions())) << text;
  }
}

TEST(QuickReply, LeavesToTheTreeReaderWhatItDoesNotVouchFor) {
  const std::string answers =
      R"("team":{"type":"choice","probabilities":{"billing":1,"technical":0,"other":0}})";
  const std::vector<std::string> left = {
      R"({"answers":{)" + answers + R"(},"answers":{}})",           // a member twice
      R"({"answers":{"t\u0065am":{"type":"choice"}}})",             // a key with an escape
      R"({"model":"clef\/flash","answers":{}})",                    // a value read with an escape
      R"({"answers":{"team":{"type":"refusal","refusal":"no"}}})",  // a refusal
      R"({"answers":{"team":{"type":"noul","noul":1}}})",           // another type
      R"({"answers":{"team":{"type":"choice","probabilities":{"billing":1,"technical":0}}}})",
      R"({"answers":{"team":{"type":"choice","probabilities":{"billing":1,"technical":0,"other":0,"x":0}}}})",
      R"({"answers":{"team":{"type":"choice","probabilities":{"billing":1.5,"technical":0,"other":0}}}})",
      R"({"answers":{"team":{"type":"choice","choice":1,"probabilities":{"billing":1,"technical":0,"other":0}}}})",
      R"({"answers":{)" + answers + R"(},"usage":{"neurons":12.5}})",  // a cost in the body
      "\xEF\xBB\xBF{\"answers\":{}}",                                  // a byte order mark
      R"({"answers":{}} x)",                                           // text after the value
      R"({"answers":{},"n":1e400})",                                   // out of a double's range
      R"({"answers":{},"s":"\ud83d\ude00"})",                          // a surrogate pair
      R"({"answers":{},"s":"a)"
      "\x01"
      R"("})",  // a control character
      R"({"answers":{},"s":")"
      "\xC0\xAF"
      R"("})",                       // an overlong form
      R"({"answers":{},"n":01})",    // a leading zero
      R"({"answers":{},"n":[1,]})",  // a trailing comma
      R"({"answers":{},"n":tru})",
      R"({"answers":{"team":{"type":"choice"}}})",  // no probabilities
      R"([{"answers":{}}])",
      "",
  };
  for (const auto& text : left) {
    EXPECT_FALSE(quick_reading(text, questions()).has_value()) << text;
  }
  std::string deep = R"({"answers":{},"n":)";
  for (int i = 0; i < 65; ++i) deep += "[";
  for (int i = 0; i < 65; ++i) deep += "]";
  deep += "}";
  EXPECT_FALSE(quick_reading(deep, questions()).has_value());
  EXPECT_NE(tree_reading(deep, questions()).rfind("error", 0), 0u) << "valid, for the tree reader";
  // A box, and more than 64 questions, are the tree reader's.
  EXPECT_FALSE(quick_reading(R"({"answers":{}})", {Question::box("where", "the box")}));
  std::vector<Question> many;
  for (int i = 0; i < 65; ++i) many.push_back(Question::yes_no("q" + std::to_string(i), "?"));
  EXPECT_FALSE(quick_reading(R"({"answers":{}})", many));
}

/// A byte dropped, replaced or inserted, or a span repeated (text_edit.hpp).
std::string mutated(const std::string& text, std::mt19937& random) {
  static const std::string bytes = "{}[],:\"\\ 0123456789.eE+-truefalsnl\x01\x7f\xc3\xa9\xff";
  return clef::testing::edited(text, random, bytes);
}

TEST(QuickReply, AgreesWithTheTreeReaderOnEveryEdit) {
  std::mt19937 random(20261207);
  int answered = 0, left = 0;
  for (int round = 0; round < 40000; ++round) {
    std::string text = published[static_cast<std::size_t>(round) % std::size(published)];
    const int edits = 1 + round % 3;
    for (int k = 0; k < edits; ++k) text = mutated(text, random);
    const auto quick = quick_reading(text, questions());
    if (!quick) {
      ++left;
      continue;
    }
    ++answered;
    ASSERT_EQ(*quick, tree_reading(text, questions())) << text;
  }
  // Both kinds were seen: the comparison was not made on one side only.
  EXPECT_GT(answered, 2000);
  EXPECT_GT(left, 2000);
}

TEST(QuickReply, TheClientsReadingIsTheTreeReadersWithTheRequestId) {
  clef::HttpResponse response;
  response.status = 200;
  response.body = published[1];
  response.headers = {{"x-request-id", "req-7"}};
  auto decision = clef::detail::read_decision(clef::Backend::ollama, response, questions(), {}, {});
  ASSERT_TRUE(decision.ok());
  EXPECT_EQ(decision->request_id, "req-7");
  decision->request_id.clear();
  EXPECT_EQ(clef::test::decision_text(decision.value()), tree_reading(published[1], questions()));
}

}  // namespace
