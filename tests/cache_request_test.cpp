// What the cache reads of a request before it looks anything up: whether the body may carry
// images, audio or video (store/cache_request.hpp), read eight bytes at a time — so it is checked
// here against the plain definition on every offset and on random bodies.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>

#include "store/cache_request.hpp"

namespace {

/// The definition: one of the names, quoted, anywhere in the body.
bool names_media(std::string_view body) {
  for (std::string_view name : {"\"images\"", "\"audio\"", "\"videos\""}) {
    if (body.find(name) != std::string_view::npos) return true;
  }
  return false;
}

TEST(CacheRequest, MayCarryMediaFindsEachNameAtEveryOffset) {
  for (const std::string name : {"\"images\"", "\"audio\"", "\"videos\""}) {
    for (std::size_t before = 0; before < 24; ++before) {
      for (std::size_t after = 0; after < 10; ++after) {
        const std::string body = std::string(before, 'x') + name + std::string(after, 'y');
        EXPECT_TRUE(clef::detail::may_carry_media(body)) << body;
        if (after == 0) {  // the closing quote cut off: not the name
          const std::string cut = body.substr(0, body.size() - 1);
          EXPECT_FALSE(clef::detail::may_carry_media(cut)) << cut;
        }
      }
    }
  }
  EXPECT_FALSE(clef::detail::may_carry_media(""));
  EXPECT_FALSE(clef::detail::may_carry_media(
      R"({"model":"clef-flash","state":{"ticket":"an image, audio"},"questions":{"team":)"
      R"({"type":"choice","instructions":"Which team?","criteria":{"a":"x","v":"y"}}}})"));
}

TEST(CacheRequest, MayCarryMediaAgreesWithItsDefinitionOnRandomBodies) {
  // Built from the names' own bytes, quotes, high bytes and 0x01 (next to which the word-wide
  // compare may flag a byte that is not the one sought).
  const std::string alphabet = "\"imagesudovx\x01\x80\xff";
  std::mt19937 random(30);
  int carrying = 0;
  for (int round = 0; round < 200000; ++round) {
    std::string body(random() % 40, ' ');
    for (char& c : body) c = alphabet[random() % alphabet.size()];
    if (random() % 4 == 0) {
      static const std::string names[] = {"\"images\"", "\"audio\"", "\"videos\""};
      body.insert(random() % (body.size() + 1), names[random() % 3]);
    }
    const bool expected = names_media(body);
    carrying += expected ? 1 : 0;
    ASSERT_EQ(clef::detail::may_carry_media(body), expected) << body;
  }
  EXPECT_GT(carrying, 40000);
  EXPECT_LT(carrying, 160000);
}

}  // namespace
