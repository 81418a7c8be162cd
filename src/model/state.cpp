// The implementation of clef/state.hpp: the state a decision model judges — text, or JSON with the
// caller's key order kept.
#include "clef/state.hpp"

#include "util/json_canonical.hpp"
#include "util/json_text.hpp"

namespace clef {

State State::text(std::string text) {
  const bool blank = text.find_first_not_of(" \t\r\n") == std::string::npos;
  std::string wire;
  // Invalid UTF-8 is refused when the request is serialized, where the error can say "state".
  if (!detail::try_append_json_string(wire, text)) {
    return State(clef::dump_json(detail::Json(text)), true, blank, false);
  }
  return State(std::move(wire), true, blank);
}

Result<State> State::json(std::string_view json_text) {
  // Most states are written as they are sent, give or take white space: copied then, not
  // parsed and written again.
  if (auto compact = detail::canonical_compact(json_text)) {
    const bool blank = *compact == "{}" || *compact == "[]";
    return State(std::move(*compact), false, blank);
  }
  auto parsed = clef::parse_json(json_text, "state JSON");
  if (!parsed) {
    Error error = parsed.error();
    error.where = "state, " + error.where;
    return error;
  }
  // An integer wider than 64 bits lives in the parsed value as a double: its text is sent as
  // written instead (made compact), so a 30-digit account number reaches the model whole.
  if (parsed->is_structured() && clef::has_wide_integer(json_text)) {
    // Sent as written, a key given twice would be read by each server its own way.
    if (auto key = detail::duplicate_key(json_text)) {
      return make_error(ErrorKind::invalid_input,
                        "the state has the key \"" + key->substr(0, 100) +
                            (key->size() > 100 ? "…" : "") +
                            "\" twice in one object; with an integer wider than 64 bits in it, "
                            "the state is sent as written and servers differ on which they "
                            "read: keep one",
                        "state");
    }
    return State(detail::compact_json(json_text), false, parsed->empty());
  }
  return State::from_json_value(parsed.value());
}

Result<State> State::from_json_value(const nlohmann::ordered_json& value) {
  if (!value.is_object() && !value.is_array()) {
    return make_error(ErrorKind::invalid_input,
                      std::string("a JSON state must be an object or an array, not ") +
                          value.type_name() + " (text is sent as a text state)",
                      "state");
  }
  try {
    return State(value.dump(-1, ' ', false, detail::Json::error_handler_t::strict), false,
                 value.empty());
  } catch (const detail::Json::type_error&) {
    return make_error(ErrorKind::invalid_input, "state contains invalid UTF-8", "state");
  }
}

}  // namespace clef
