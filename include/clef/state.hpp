// clef: the state a decision model judges — text, or JSON with the caller's key order kept.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "clef/export.hpp"
#include "clef/result.hpp"

namespace clef {

/// What is being judged: a ticket, a message, any JSON.
///
/// Key order of a JSON object changes a model's answer, so clef never reorders it:
///
///     auto s = clef::State::json(R"({"subject":"Invoice","message":"Can I get one?"})");
///     // sent as {"subject":...,"message":...}, in that order
class CLEF_API State {
 public:
  /// A plain-text state, sent as a JSON string.
  static State text(std::string text);
  /// A JSON object or array given as text; fails on invalid JSON, scalars and null. Sent as
  /// its parsed value is written, except that a state holding an integer wider than 64 bits
  /// (which a parsed value keeps only as a double) is sent as written, made compact: its digits
  /// reach the model whole.
  static Result<State> json(std::string_view json_text);
  /// A JSON object or array; key order as in the ordered_json value.
  static Result<State> from_json_value(const nlohmann::ordered_json& value);

  bool is_text() const noexcept { return m_is_text; }
  /// Text of only white space, or an empty object or array: nothing to judge. Such a state is
  /// refused when sent (a default-constructed request has one).
  bool blank() const noexcept { return m_blank; }
  /// The state as compact wire JSON ("\"text\"" or "{...}").
  const std::string& wire_json() const noexcept { return m_wire; }
  /// False for text that is not valid UTF-8; such a state is refused when sent.
  bool valid_utf8() const noexcept { return m_valid_utf8; }

 private:
  State(std::string wire, bool is_text, bool blank, bool valid_utf8 = true)
      : m_wire(std::move(wire)), m_is_text(is_text), m_blank(blank), m_valid_utf8(valid_utf8) {}
  std::string m_wire;
  bool m_is_text = true;
  bool m_blank = true;
  bool m_valid_utf8 = true;
};

}  // namespace clef
