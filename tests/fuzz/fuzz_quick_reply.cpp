// libFuzzer: the quick reader of a reply (wire/quick_reply.hpp) against the tree reader
// (parse_decision over parse_json) on any text, for one question of each type it reads. Oracle:
// whenever the quick reader answers, the tree reader reads the text too and its decision is the
// same to the bit (tests/support/decision_text.hpp); "no crash" otherwise.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "clef/clef.hpp"
#include "decision_text.hpp"
#include "wire/quick_reply.hpp"
#include "wire/wire_response.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<clef::Question> questions = {
      clef::Question::choice(
          "team", "Which team?",
          {{"billing", "Money"}, {"technical", std::nullopt}, {"other", "Else"}}),
      clef::Question::yes_no("refund", "Refund?"),
      clef::Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"})};
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto quick = clef::detail::read_quick_reply(text, questions, {});
  if (!quick) return 0;
  auto json = clef::parse_json(text, "the response body", clef::ErrorKind::invalid_response);
  if (!json) __builtin_trap();
  auto tree = clef::detail::parse_decision(json.value(), text, questions, {});
  if (!tree) __builtin_trap();
  tree->raw_json = text;
  if (clef::test::decision_text(*quick) != clef::test::decision_text(tree.value())) {
    __builtin_trap();
  }
  return 0;
}
