// libFuzzer: the questions reader (clef::parse_questions) and the three shorthand parsers on the
// same bytes. What parses must be valid, and must read back the same after it is written.
#include <cstddef>
#include <cstdint>
#include <string>

#include "flags/question_spec.hpp"
#include "model/question_wire.hpp"

namespace {

std::string written(const std::vector<clef::Question>& questions) {
  std::string out;
  if (!clef::detail::append_questions(out, questions)) __builtin_trap();  // parsed text is UTF-8
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto questions = clef::parse_questions(text);
  if (questions) {
    if (!clef::validate(questions.value())) __builtin_trap();  // parsed means valid
    const std::string once = written(questions.value());
    auto again = clef::parse_questions(once);
    if (!again || written(again.value()) != once) __builtin_trap();  // the writer reads back
  }
  for (auto type : {clef::QuestionType::choice, clef::QuestionType::yes_no,
                    clef::QuestionType::score, clef::QuestionType::box}) {
    auto question = clef::cli::parse_shorthand(type, text);
    if (question && !clef::validate(question.value())) __builtin_trap();
  }
  return 0;
}
