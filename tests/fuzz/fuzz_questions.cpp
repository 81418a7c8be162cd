// libFuzzer: the questions-file reader and the three shorthand parsers on the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "question_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto questions = clef::cli::parse_questions_json(text, "fuzz.json");
  if (questions && !clef::validate(questions.value())) __builtin_trap();  // parsed means valid
  for (auto type :
       {clef::QuestionType::choice, clef::QuestionType::noul, clef::QuestionType::score}) {
    auto question = clef::cli::parse_shorthand(type, text);
    if (question && !clef::validate(question.value())) __builtin_trap();
  }
  return 0;
}
