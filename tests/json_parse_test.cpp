// parse_json builds exactly what nlohmann's own parser builds — members in the order first
// written, a repeated key in its first place with its last value — and an object of many
// members in one pass: a server or a file can send hundreds of thousands, and nlohmann's own
// builder took 13 s for 100,000 (each member searched for among all before it, each growth
// copying them all), so half a million would pass this test's 120 s limit by minutes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "clef/json.hpp"

namespace {

using Json = nlohmann::ordered_json;

Json parsed(const std::string& text) {
  auto result = clef::parse_json(text, "the text");
  EXPECT_TRUE(result.ok()) << text << ": " << (result.ok() ? "" : result.error().to_string());
  return result.ok() ? std::move(result).value() : Json();
}

/// Random JSON whose objects often repeat a key: few names, up to 40 members (so both ways of
/// finding repeats run), nested a few levels.
std::string random_text(std::mt19937& random, int depth) {
  const int kind = static_cast<int>(random() % (depth > 3 ? 4 : 6));
  switch (kind) {
    case 0:
      return std::to_string(static_cast<int>(random() % 2000) - 1000);
    case 1:
      return "\"s" + std::to_string(random() % 5) + "\"";
    case 2:
      return random() % 2 ? "true" : "null";
    case 3:
      return std::to_string(static_cast<double>(random() % 1000) / 8.0);
    case 4: {
      std::string text = "[";
      const int n = static_cast<int>(random() % 5);
      for (int i = 0; i < n; ++i) text += (i ? "," : "") + random_text(random, depth + 1);
      return text + "]";
    }
    default: {
      std::string text = "{";
      const int n = static_cast<int>(random() % 41);
      const int names = 1 + static_cast<int>(random() % 30);
      for (int i = 0; i < n; ++i) {
        text += (i ? ",\"k" : "\"k") + std::to_string(random() % names) + "\":";
        text += random_text(random, depth + 1);
      }
      return text + "}";
    }
  }
}

TEST(JsonParse, BuildsWhatNlohmannBuildsWithRepeatedKeysInTheirFirstPlaceWithTheirLastValue) {
  const std::vector<std::string> texts = {
      R"({"a":1,"b":2,"a":3})",
      R"({"a":{"x":1},"b":[1,{"a":2,"a":3}],"a":{"y":2},"a":{"z":3}})",
      R"({"é":1,"e":2,"é":{"n":[]},"":0,"":1})",
      R"([{},[],{"a":null,"a":false},"x",-0.5,18446744073709551615,-9223372036854775808])",
      R"("just a string")",
      R"({"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,)"
      R"("k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":"third","k17":17,"k3":"last",)"
      R"("k0":"first again"})",
  };
  for (const std::string& text : texts) {
    const Json expected = Json::parse(text);
    EXPECT_EQ(parsed(text), expected) << text;
    EXPECT_EQ(clef::dump_json(parsed(text)), expected.dump()) << text;
  }
  std::mt19937 random(20261207);
  for (int i = 0; i < 3000; ++i) {
    const std::string text = random_text(random, 0);
    const Json expected = Json::parse(text);
    ASSERT_EQ(clef::dump_json(parsed(text)), expected.dump()) << text;
  }
}

TEST(JsonParse, HalfAMillionMembersOfOneObjectAreReadInOnePass) {
  constexpr int members = 500'000;
  std::string text = "{";
  for (int i = 0; i < members; ++i)
    text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  text += R"("k0":"again","k250000":"again too"})";
  const Json object = parsed(text);
  ASSERT_TRUE(object.is_object());
  const auto& in_order = object.get_ref<const Json::object_t&>();
  ASSERT_EQ(in_order.size(), static_cast<std::size_t>(members));
  EXPECT_EQ(in_order.front().first, "k0");
  EXPECT_EQ(in_order.front().second, "again");
  const auto middle = in_order.begin() + 250'000;
  EXPECT_EQ(middle->first, "k250000");
  EXPECT_EQ(middle->second, "again too");
  EXPECT_EQ(in_order.back().first, "k499999");
  EXPECT_EQ(in_order.back().second, 499'999);
}

}  // namespace
