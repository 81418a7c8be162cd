// clef::json_object_members (clef/json.hpp): an object's members read with the strict cursor.
#include "clef/json.hpp"
#include "util/json_cursor.hpp"

namespace clef {

std::optional<std::vector<JsonMember>> json_object_members(std::string_view text) {
  detail::JsonCursor json(text);
  if (json.peek() != '{') return std::nullopt;
  std::vector<JsonMember> members;
  detail::JsonCursor::Members reader(json);
  std::string_view key;
  while (reader.next(key)) {
    for (const JsonMember& seen : members) {
      if (seen.key == key) return std::nullopt;  // parse_json keeps the last: its to read
    }
    if (members.size() == detail::JsonCursor::most_members) return std::nullopt;
    const std::size_t begin = json.position();
    json.skip();
    members.push_back({key, json.text_between(begin, json.offset())});
  }
  if (!json.ok() || !json.at_end()) return std::nullopt;
  return members;
}

}  // namespace clef
