// libFuzzer: `clef mock --rules` files. Input: the rules file text, then (after a NUL byte, when
// there is one) a state. Nothing may crash or stall; a file that parses holds within the bounds,
// and each of its patterns is matched against the state (RE2: linear in the state's length).
// The input read as a single pattern is compiled and matched too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "clef/mock.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto nul = input.find('\0');
  const std::string text = input.substr(0, nul);
  const std::string state = nul == std::string::npos ? text : input.substr(nul + 1);

  if (auto rules = clef::parse_mock_rules(text)) {
    if (rules->size() > clef::max_mock_rules) __builtin_trap();
    for (const auto& rule : *rules) {
      if (rule.pattern.text().size() > clef::MockPattern::max_length) __builtin_trap();
      if (!(rule.probability >= 0 && rule.probability <= 1)) __builtin_trap();
      (void)rule.pattern.found_in(state);
      if (!clef::MockPattern::compile(rule.pattern.text())) __builtin_trap();
    }
  } else if (rules.error().message.empty()) {
    __builtin_trap();  // a refusal always says why
  }

  if (auto pattern = clef::MockPattern::compile(text)) {
    (void)pattern->found_in(state);
  } else if (pattern.error().message.empty()) {
    __builtin_trap();
  }
  return 0;
}
