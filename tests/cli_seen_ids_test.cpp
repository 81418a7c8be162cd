// The batch's set of ids read (SeenIds, for the warning on repeated ids) against std::set: the
// same answer to every insert, across the table's growth, for ids of every length and for ids
// that repeat far apart.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "batch/seen_ids.hpp"

namespace {

TEST(CliSeenIds, SaysWhatASetSaysForEveryIdAcrossItsGrowth) {
  std::mt19937 random(7);
  clef::cli::SeenIds seen;
  std::set<std::string> reference;
  std::size_t repeats = 0;
  for (int i = 0; i < 200000; ++i) {
    // Ids drawn from 150,000 names: about a quarter repeat, some long after their first.
    std::string id = "T" + std::to_string(random() % 150000);
    if (random() % 50 == 0) id += std::string(random() % 300, 'x');
    const bool added = reference.insert(id).second;
    repeats += !added;
    ASSERT_EQ(seen.insert(id), added) << "insert " << i << " of " << id;
  }
  EXPECT_GT(repeats, 40000u);
}

TEST(CliSeenIds, AnEmptyIdAndIdsOfNulsAreIdsLikeAnyOther) {
  clef::cli::SeenIds seen;
  EXPECT_TRUE(seen.insert(""));
  EXPECT_FALSE(seen.insert(""));
  EXPECT_TRUE(seen.insert(std::string(1, '\0')));
  EXPECT_TRUE(seen.insert(std::string(2, '\0')));
  EXPECT_FALSE(seen.insert(std::string(1, '\0')));
}

}  // namespace
