// The readers that take JSON text without building a value — canonical_compact (State::json's
// copy of a state already in the form it is sent in) and json_object_members — against
// parse_json and dump_json: wherever they answer, they agree with the parse; on the common
// shapes they do answer; the rest they leave to the parse.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clef/clef.hpp"
#include "text_edit.hpp"
#include "util/json_canonical.hpp"

namespace {

/// dump_json(parse_json(text)) for an object or array, or "" when the parse refuses it.
std::string dumped(const std::string& text) {
  auto json = clef::parse_json(text, "the text");
  if (!json || !json->is_structured()) return "";
  return clef::dump_json(json.value());
}

const char* const states[] = {
    R"({"ticket": "I was charged twice. Please refund the extra payment.", "order": 1042})",
    R"({"subject":"Invoice","message":"Can I get one?","amount":12.5,"paid":false,"tags":["a","b"],"x":null})",
    "{\n  \"nested\": {\"deep\": [1, -2, 0.25, 1.0, -0.0, 18446744073709551615, "
    "-9223372036854775808]},\n"
    "  \"text\": \"line one\\nline \\\"two\\\"\\ttab\\\\ caf\xC3\xA9 \xE2\x82\xAC\"\n}",
    R"([{"a":1},{"b":[true,false,null]},[],{},"s"])",
    R"({})",
    R"([ ])",
};

TEST(JsonCanonical, TheCommonStatesAreCopiedAsTheParseWouldWriteThem) {
  for (const char* text : states) {
    const auto compact = clef::detail::canonical_compact(text);
    ASSERT_TRUE(compact.has_value()) << text;
    EXPECT_EQ(*compact, dumped(text)) << text;
    auto state = clef::State::json(text);
    ASSERT_TRUE(state.ok());
    auto parsed = clef::State::from_json_value(clef::parse_json(text, "t").value());
    EXPECT_EQ(state->wire_json(), parsed->wire_json());
    EXPECT_EQ(state->blank(), parsed->blank()) << text;
  }
}

TEST(JsonCanonical, WhatTheDumpWritesOtherwiseIsLeftToTheParse) {
  const char* const left[] = {
      R"({"a":1.50})",
      R"({"a":1e2})",
      R"({"a":-0})",
      R"({"a":"\/"})",
      R"({"a":"\u00e9"})",
      R"({"a":1,"a":2})",
      R"({"a":18446744073709551616})",
      R"({"\u0061":1})",
      R"("text")",
      R"(12)",
      R"({"a":1} x)",
      "\xEF\xBB\xBF{}",
      R"({"a":[1,]})",
      R"({"a":01})",
      "",
  };
  for (const char* text : left) {
    EXPECT_FALSE(clef::detail::canonical_compact(text).has_value()) << text;
  }
  // And State::json still reads them as it always did: the wide integer's digits kept.
  auto wide = clef::State::json(R"({"account": 123456789012345678901234567890})");
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->wire_json(), R"({"account":123456789012345678901234567890})");
}

/// A byte dropped, replaced or inserted, or a span repeated (text_edit.hpp).
std::string edited(const std::string& text, std::mt19937& random) {
  static const std::string bytes = "{}[],:\"\\ \n0123456789.eE+-truefalsnlu/\x01\xc3\xa9\xff";
  return clef::testing::edited(text, random, bytes, 16);
}

TEST(JsonCanonical, AgreesWithTheParseOnEveryEdit) {
  std::mt19937 random(71207);
  int copied = 0, left = 0, members_read = 0;
  for (int round = 0; round < 40000; ++round) {
    std::string text = states[static_cast<std::size_t>(round) % std::size(states)];
    for (int k = 0; k <= round % 3; ++k) text = edited(text, random);
    if (const auto compact = clef::detail::canonical_compact(text)) {
      ++copied;
      ASSERT_EQ(*compact, dumped(text)) << text;
    } else {
      ++left;
    }
    // json_object_members: when it answers, the text parses to an object with those members,
    // in that order, each value the parse's.
    if (const auto members = clef::json_object_members(text)) {
      ++members_read;
      auto json = clef::parse_json(text, "t");
      ASSERT_TRUE(json && json->is_object()) << text;
      ASSERT_EQ(members->size(), json->size()) << text;
      std::size_t i = 0;
      for (const auto& [key, value] : json->items()) {
        const auto& member = (*members)[i++];
        EXPECT_EQ(member.key, key) << text;
        EXPECT_EQ(clef::parse_json(member.value, "v").value(), value) << text;
      }
    }
  }
  EXPECT_GT(copied, 2000);
  EXPECT_GT(left, 2000);
  EXPECT_GT(members_read, 2000);
}

TEST(JsonCanonical, MembersAreNotReadWhereTheParseWouldKeepOneOfTwo) {
  EXPECT_FALSE(clef::json_object_members(R"({"id":1,"id":2})"));
  EXPECT_FALSE(clef::json_object_members(R"({"i\u0064":1})"));
  EXPECT_FALSE(clef::json_object_members(R"([1])"));
  const auto members = clef::json_object_members(R"( {"id" : "T1" , "state":{"a":[1, 2]}} )");
  ASSERT_TRUE(members);
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[0].key, "id");
  EXPECT_EQ((*members)[0].value, "\"T1\"");
  EXPECT_EQ((*members)[1].value, R"({"a":[1, 2]})");
}

}  // namespace
