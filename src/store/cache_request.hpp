// Internal: what a decision request asks, read back from its body by the cache — the questions
// an answer must answer before it is stored, the model it must come from, and whether it carries
// images — without parsing the state, and with each question set parsed once.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/question.hpp"

namespace clef::detail {

/// False only when `body` cannot carry images, audio or video: none of their names is in it
/// (a cheap test before the reading that says for sure).
bool may_carry_media(std::string_view body);

/// What a request asks, read back from its body: what an answer must answer to be stored.
struct Asked {
  std::shared_ptr<const std::vector<Question>> questions;
  std::string model;    ///< The body's "model": an answer from another is not stored.
  bool images = false;  ///< images, audio or video: held to CacheOptions::include_images
};

/// The questions of the last request body read back, kept: a batch asks every item the same
/// ones, and reading them again for each answer cost more than the rest of a miss. Thread-safe.
class LastQuestions {
 public:
  /// The questions `text` holds; null when it holds none clef can read.
  std::shared_ptr<const std::vector<Question>> of(std::string_view text);

 private:
  std::mutex m_mutex;
  std::string m_text;
  std::shared_ptr<const std::vector<Question>> m_questions;
};

/// Nothing when the body is not a decision request clef can read back: such a request is sent,
/// never cached, since no answer to it could be checked. Read member by member, not parsed
/// whole: the state, most of the body, is not needed (the key covers it).
std::optional<Asked> read_asked(std::string_view body, LastQuestions& last);

}  // namespace clef::detail
