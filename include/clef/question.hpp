// clef: the three System One question types.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clef/export.hpp"
#include "clef/result.hpp"

namespace clef {

enum class QuestionType {
  choice,  ///< Pick one of named options; the answer has a probability per option.
  yes_no,  ///< Yes / no / unknown ("noul" on the wire); the answer is P(true).
  noul [[deprecated("QuestionType::yes_no")]] = yes_no,
  score,  ///< An ordered scale of 2–10 described levels; the answer is the expected level.
  /// Where one thing is in the request's image: the answer is a box, four edges as fractions of
  /// the image (TypeSafe's Jev 1.14, `jev-1.14.0` / `jev-preview`; experimental there). Only
  /// the generic System One backend sends it; Workers AI, Ollama and OpenAI have no such type.
  box,
};

/// "choice", "noul", "score" or "box": the wire names. (clef's own name for the yes/no/unknown type
/// is yes_no everywhere in C++ and "yes/no" in text; "noul" is only what the wire calls it.)
CLEF_API const char* to_string(QuestionType type) noexcept;

/// What the model reads: a question's instructions or an option's description. Plain text, or
/// a JSON object or array sent as it is (Workers AI, Ollama's Clef models and TypeSafe read
/// structured guidance such as {"question": "...", "focus": "..."}).
class CLEF_API Guidance {
 public:
  Guidance() = default;
  Guidance(std::string text) : m_text(std::move(text)) {}  // NOLINT: "Which team?" converts
  Guidance(const char* text) : m_text(text) {}             // NOLINT
  /// A JSON object or array, its key order kept. Fails on anything else.
  static Result<Guidance> structured(std::string_view json_text);

  bool is_structured() const noexcept { return m_structured; }
  /// The plain text, or the structured value as compact JSON.
  const std::string& text() const noexcept { return m_text; }
  /// Only white space, or an empty object or array.
  bool blank() const noexcept;

  friend bool operator==(const Guidance& a, const Guidance& b) {
    return a.m_structured == b.m_structured && a.m_text == b.m_text;
  }
  friend bool operator!=(const Guidance& a, const Guidance& b) { return !(a == b); }

 private:
  std::string m_text;
  bool m_structured = false;
};

/// One option of a choice question. A missing description lets the label speak for itself
/// (sent as null).
struct ChoiceOption {
  std::string label;
  std::optional<Guidance> description;
};

/// A named question. Build one with the factories; the name is shown to the model by
/// some servers (Ollama, llama.cpp), so renaming a question can change its answer.
///
///     auto team = clef::Question::choice("team", "Which team should handle this ticket?",
///                                        {{"billing", "Payments and refunds"},
///                                         {"technical", "Bugs and integrations"},
///                                         {"other", std::nullopt}});
///     auto refund = clef::Question::yes_no("refund", "Does the customer ask for a refund?");
///     auto urgency = clef::Question::score("urgency", "How urgent?", {"Routine", "Urgent"});
///     auto mug = clef::Question::box("mug", "The coffee mug in the photo");
struct CLEF_API Question {
  std::string name;
  QuestionType type = QuestionType::choice;
  Guidance instructions;

  std::vector<ChoiceOption> options;       ///< choice: in the order given (it breaks ties).
  std::optional<std::string> true_means;   ///< yes/no: what "true" means (criteria.true).
  std::optional<std::string> false_means;  ///< yes/no: what "false" means (criteria.false).
  std::vector<std::string> levels;         ///< score: lowest first; level i is levels[i].
  /// score: what is sent for level i when given — a text, or a structured description (a JSON
  /// object or array, as Workers AI's schema allows: "ordered level descriptions (string,
  /// object, or array)"); levels[i], its label, is sent when not. Empty, or one per level.
  std::vector<std::optional<Guidance>> level_descriptions;

  static Question choice(std::string name, Guidance instructions,
                         std::vector<ChoiceOption> options);
  static Question yes_no(std::string name, Guidance instructions,
                         std::optional<std::string> true_means = std::nullopt,
                         std::optional<std::string> false_means = std::nullopt);
  static Question score(std::string name, Guidance instructions, std::vector<std::string> levels);
  /// Instructions only: what to find, and in which image when there are several. A box is
  /// always answered, even when the thing is absent: ask a yes/no beside it.
  static Question box(std::string name, Guidance instructions);
};

/// Limits every server enforces; clef checks them before sending.
struct QuestionLimits {
  static constexpr std::size_t max_questions = 64;
  static constexpr std::size_t max_name_length = 100;
  static constexpr std::size_t min_options = 2;
  static constexpr std::size_t max_options = 255;  ///< Workers AI, TypeSafe; Ollama's Nimble: 26.
  static constexpr std::size_t min_levels = 2;
  static constexpr std::size_t max_levels = 10;
};

/// Checks one question against the universal rules. The error names the question and the rule.
CLEF_API Status validate(const Question& question);

/// Checks a whole set: 1–64 questions, unique names, each valid.
CLEF_API Status validate(const std::vector<Question>& questions);

/// Reads questions in the wire format, the `questions` object of a request, in its key order:
///
///     auto questions = clef::parse_questions(R"({"refund": {"type": "noul",
///                                                "instructions": "Asks for a refund?"}})");
///     if (!questions) std::cerr << questions.error().to_string() << "\n";
///
/// Unknown fields are refused, never dropped. An error's `where` names the question and field
/// ("questions.team.criteria.billing") and the byte where it starts ("byte 57"); the set is
/// validated as a request's would be.
CLEF_API Result<std::vector<Question>> parse_questions(std::string_view json_text);

/// The identity of a question set: SHA-256 (hex) of the questions as clef writes them on the wire
/// (compact, in order). A policy, an evaluation report and a batch run record name the questions
/// they were made for by it; an error when a question cannot be written.
CLEF_API Result<std::string> questions_sha256(const std::vector<Question>& questions);

}  // namespace clef
