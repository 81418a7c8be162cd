// clef batch's JSONL reader reads the common line — a string or integer id, a text or JSON state
// — with no JSON value built (json_object_members, State::json); every other line goes through
// the parse. The two must make the same item: here each line is read as it is, and again with a
// member whose key holds an escape put first, which the quick reading leaves to the parse.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "batch/batch_input.hpp"
#include "clef/json.hpp"

namespace {

/// Every item of `text` read as JSONL, each as one line of text that tells all of it.
std::vector<std::string> items_of(const std::string& text) {
  std::istringstream in(text);
  auto reader = clef::cli::make_reader(in, clef::cli::InputFormat::jsonl, {});
  EXPECT_TRUE(reader.ok());
  std::vector<std::string> out;
  while (auto item = (*reader)->next()) {
    std::string told = "line " + std::to_string(item->line) + " id " + clef::dump_json(item->id) +
                       " (" + item->id.type_name() + ")";
    if (item->state) {
      told += std::string(" state ") + (item->state->is_text() ? "text " : "json ") +
              (item->state->blank() ? "blank " : "") + item->state->wire_json();
    } else {
      told += " error " + std::string(clef::to_string(item->state.error().kind)) + " " +
              item->state.error().message;
    }
    out.push_back(told);
  }
  return out;
}

/// The line with `"\u0078":0` first in it, when it is an object: read by the parse alone.
std::string through_the_parse(const std::string& line) {
  const auto brace = line.find('{');
  if (brace == std::string::npos || line.find_first_not_of(" \t") != brace) return line;
  return line.substr(0, brace + 1) + R"("\u0078":0,)" + line.substr(brace + 1);
}

const char* const lines[] = {
    R"({"id": "T1", "state": "I was charged twice. Please refund the extra payment."})",
    R"({"id":42,"state":{"ticket":"caf\u00e9","amount":12.5,"items":[1,2,{"a":null}]},"meta":{"x":[]}})",
    R"({"state": {"b": 1.50, "a": 1e2}, "id": -0})",
    R"({"id": 18446744073709551615, "state": ["one", "two"]})",
    R"({"id": -9223372036854775808, "state": {}})",
    R"({"id": 18446744073709551616, "state": "too wide an id"})",
    R"({"id": 1.5, "state": "a fraction"})",
    R"({"id": "a\"b", "state": "an escaped id"})",
    R"({"id": "T2", "state": "line\nbreak \"quoted\""})",
    R"({"id": "T3", "state": 12})",
    R"({"id": "T4", "state": null})",
    R"({"id": "T5"})",
    R"({"state": "no id"})",
    R"({"id": true, "state": "a boolean id"})",
    R"({"id": "T6", "state": {"account": 123456789012345678901234567890}})",
    R"({"id": "T7", "state": {"k": 1, "k": 2}})",
    R"({"id": "T8", "id": "T9", "state": "two ids"})",
    R"({"id": "T10", "state": "   "})",
    R"({"id": "T11", "state": "caf)"
    "\xC3\xA9"
    R"( \u20ac"})",
    R"(["not", "an", "object"])",
};

TEST(JsonlInput, TheQuickReadingMakesTheItemTheParseMakes) {
  std::string as_is, parsed;
  for (const char* line : lines) {
    as_is += std::string(line) + "\n";
    parsed += through_the_parse(line) + "\n";
  }
  const auto quick = items_of(as_is);
  const auto slow = items_of(parsed);
  ASSERT_EQ(quick.size(), std::size(lines));
  for (std::size_t i = 0; i < quick.size(); ++i) {
    // An error's byte offset moves with the member put in: the message up to it is compared.
    EXPECT_EQ(quick[i].substr(0, quick[i].find(" byte ")),
              slow[i].substr(0, slow[i].find(" byte ")))
        << lines[i];
  }
}

TEST(JsonlInput, TheQuickReadingAgreesWithTheParseOnEveryEdit) {
  std::mt19937 random(1207);
  static const std::string bytes = "{}[],:\"\\ 0123456789.eE-truefalsnlu\xc3\xa9";
  const auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(random);
  };
  std::string as_is, parsed;
  std::vector<std::string> sources;
  for (int round = 0; round < 6000; ++round) {
    std::string line = lines[static_cast<std::size_t>(round) % 5];  // the well-formed ones
    for (int k = 0; k <= round % 2; ++k) {
      const std::size_t at = pick(line.size());
      if (pick(2) == 0)
        line.erase(at, 1);
      else
        line.insert(at, 1, bytes[pick(bytes.size())]);
    }
    if (line.find('\n') != std::string::npos) continue;
    sources.push_back(line);
    as_is += line + "\n";
    parsed += through_the_parse(line) + "\n";
  }
  const auto quick = items_of(as_is);
  const auto slow = items_of(parsed);
  ASSERT_EQ(quick.size(), slow.size());
  for (std::size_t i = 0; i < quick.size(); ++i) {
    ASSERT_EQ(quick[i].substr(0, quick[i].find(" byte ")),
              slow[i].substr(0, slow[i].find(" byte ")))
        << sources[i];
  }
}

}  // namespace

// The progress total counts the input's newlines in blocks of 64 KiB: every count the same as a
// byte-at-a-time count, newlines at the blocks' first and last bytes, runs of them, none at all,
// and a last line without one; a FIFO or a missing file has no total (it could be read once only).
TEST(CountLines, CountsEveryNewlineWhereverTheBlocksFall) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(tmp ? tmp : "/tmp") + "/count_lines_" + std::to_string(::getpid()) + ".txt";
  std::mt19937 random(7);
  const std::size_t block = 1 << 16;
  const std::vector<std::size_t> sizes = {0, 1, block - 1, block, block + 1, 3 * block + 5};
  for (std::size_t size : sizes) {
    for (int trial = 0; trial < 6; ++trial) {
      std::string text(size, 'x');
      const std::size_t every = 1 + random() % (trial < 3 ? 3 : 200);
      for (std::size_t i = 0; i < size; ++i)
        if (random() % every == 0) text[i] = '\n';
      if (size > 0) {
        text[0] = trial % 2 ? '\n' : 'a';
        text[size - 1] = trial % 3 ? '\n' : 'z';
      }
      if (size > block) text[block - 1] = text[block] = '\n';
      {
        std::ofstream out(path, std::ios::binary);
        out << text;
      }
      const auto counted = clef::cli::count_lines(path);
      ASSERT_TRUE(counted.has_value()) << size;
      EXPECT_EQ(*counted, static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')))
          << "size " << size << " trial " << trial;
    }
  }
  std::remove(path.c_str());
  EXPECT_FALSE(clef::cli::count_lines(path).has_value());
  EXPECT_FALSE(clef::cli::count_lines("-").has_value());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_FALSE(clef::cli::count_lines(path).has_value());  // not opened: no writer to wait for
  std::remove(path.c_str());
}
