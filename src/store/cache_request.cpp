// The implementation of cache_request.hpp.
#include "store/cache_request.hpp"

#include "clef/json.hpp"
#include "util/json_text.hpp"

namespace clef::detail {

bool may_carry_media(std::string_view body) {
  for (std::string_view field : {"\"images\"", "\"audio\"", "\"videos\""}) {
    if (body.find(field) != std::string_view::npos) return true;
  }
  return false;
}

std::shared_ptr<const std::vector<Question>> LastQuestions::of(std::string_view text) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_questions && text == m_text) return m_questions;
  auto questions = parse_questions(text);
  if (!questions) return nullptr;
  m_text.assign(text);
  m_questions = std::make_shared<const std::vector<Question>>(std::move(questions).value());
  return m_questions;
}

std::optional<Asked> read_asked(std::string_view body, LastQuestions& last) {
  const auto questions = member_text(body, "questions");
  if (!questions) return std::nullopt;
  Asked asked;
  asked.questions = last.of(*questions);
  if (!asked.questions) return std::nullopt;
  if (const auto model = member_text(body, "model")) {
    auto name = clef::parse_json(*model, "the model");
    if (!name || !name->is_string()) return std::nullopt;
    asked.model = name->get<std::string>();
  }
  if (!may_carry_media(body)) return asked;
  for (const char* field : {"images", "audio", "videos"}) {
    const auto attachments = member_text(body, field);
    if (attachments && compact_json(*attachments) != "[]") asked.images = true;
  }
  return asked;
}

}  // namespace clef::detail
