// libFuzzer: the readers that take JSON text without building a value, against parse_json on
// any text. Oracles: whenever canonical_compact answers, the text parses to an object or array
// that dump_json writes as its answer (State::json sends that); whenever json_object_members
// answers, the text parses to an object with those members, in that order, each value the
// parse's; "no crash" otherwise.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "clef/json.hpp"
#include "util/json_canonical.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto compact = clef::detail::canonical_compact(text);
  const auto members = clef::json_object_members(text);
  if (!compact && !members) return 0;
  auto json = clef::parse_json(text, "the text");
  if (!json) __builtin_trap();
  if (compact && (!json->is_structured() || clef::dump_json(json.value()) != *compact)) {
    __builtin_trap();
  }
  if (members) {
    if (!json->is_object() || json->size() != members->size()) __builtin_trap();
    std::size_t i = 0;
    for (const auto& [key, value] : json->items()) {
      const auto& member = (*members)[i++];
      auto read = clef::parse_json(member.value, "a value");
      if (member.key != key || !read || read.value() != value) __builtin_trap();
    }
  }
  return 0;
}
