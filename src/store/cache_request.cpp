// The implementation of cache_request.hpp.
#include "store/cache_request.hpp"

#include <cstdint>

#include "clef/json.hpp"
#include "util/byte_words.hpp"
#include "util/json_cursor.hpp"
#include "util/json_text.hpp"

namespace clef::detail {

namespace {

/// Whether one of the names, quoted, starts at body[at] (a quote).
bool media_name_at(std::string_view body, std::size_t at) {
  const std::string_view after = body.substr(at + 1);
  for (std::string_view name : {"images\"", "audio\"", "videos\""}) {
    if (after.substr(0, name.size()) == name) return true;
  }
  return false;
}

}  // namespace

bool may_carry_media(std::string_view body) {
  // Eight bytes at a time: a quote followed by i, a or v is a candidate, checked for the names
  // (a search per quote cost a tenth of what a cache miss did). Byte j of `next` is the byte
  // after byte j of `here`, whatever the machine's byte order.
  std::size_t at = 0;
  for (; at + 9 <= body.size(); at += 8) {
    const std::uint64_t here = word_at(body.data() + at);
    const std::uint64_t next = word_at(body.data() + at + 1);
    const std::uint64_t candidates =
        bytes_equal(here, '"') &
        (bytes_equal(next, 'i') | bytes_equal(next, 'a') | bytes_equal(next, 'v'));
    if (candidates == 0) continue;
    for (std::size_t i = at; i < at + 8; ++i) {
      if (body[i] == '"' && media_name_at(body, i)) return true;
    }
  }
  for (; at < body.size(); ++at) {
    if (body[at] == '"' && media_name_at(body, at)) return true;
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

namespace {

/// The members of a body read_asked takes (the last of each, as member_text reads them).
struct AskedMembers {
  std::optional<std::string_view> questions, model, images, audio, videos;
};

AskedMembers asked_members(std::string_view body) {
  AskedMembers out;
  // The common body in one pass; any other (a repeated or escaped key, a byte order mark) member
  // by member, each read walking the body again.
  if (const auto members = json_object_members(body)) {
    for (const JsonMember& member : *members) {
      auto* slot = member.key == "questions" ? &out.questions
                   : member.key == "model"   ? &out.model
                   : member.key == "images"  ? &out.images
                   : member.key == "audio"   ? &out.audio
                   : member.key == "videos"  ? &out.videos
                                             : nullptr;
      if (slot) *slot = member.value;
    }
    return out;
  }
  out.questions = member_text(body, "questions");
  out.model = member_text(body, "model");
  if (may_carry_media(body)) {
    out.images = member_text(body, "images");
    out.audio = member_text(body, "audio");
    out.videos = member_text(body, "videos");
  }
  return out;
}

/// The model a body's "model" member names, or nullopt when it is not a string.
std::optional<std::string> model_named(std::string_view text) {
  JsonCursor json(text);
  if (const auto plain = json.plain_string(); plain && json.at_end()) return std::string(*plain);
  auto name = clef::parse_json(text, "the model");
  if (!name || !name->is_string()) return std::nullopt;
  return name->get<std::string>();
}

}  // namespace

std::optional<Asked> read_asked(std::string_view body, LastQuestions& last) {
  const AskedMembers members = asked_members(body);
  if (!members.questions) return std::nullopt;
  Asked asked;
  asked.questions = last.of(*members.questions);
  if (!asked.questions) return std::nullopt;
  if (members.model) {
    auto model = model_named(*members.model);
    if (!model) return std::nullopt;
    asked.model = std::move(*model);
  }
  for (const auto& attachments : {members.images, members.audio, members.videos}) {
    if (attachments && compact_json(*attachments) != "[]") asked.images = true;
  }
  return asked;
}

}  // namespace clef::detail
