// Reading a decision request's body: the profile's size cap, the bounded JSON parse, and the
// model and state the rules and the simulated model read.
#include "mock/request_body.hpp"

#include "mock/openai_profile.hpp"

#include "clef/json.hpp"
#include "util/json_text.hpp"

namespace clef::mock_detail {
namespace {

/// Ollama refuses a body larger than this without images.
constexpr std::size_t ollama_text_body_bytes = 64u * 1024u;

/// Whether the top-level "images" member holds an image: an array with a string that is not
/// empty. `"images": []` or `[""]` carries none, so it lifts no cap.
bool carries_an_image(const std::string& text) {
  const auto images = detail::member_text(text, "images");
  if (!images) return false;
  auto parsed = clef::parse_json(*images, "images");
  if (!parsed || !parsed->is_array()) return false;
  for (const auto& image : *parsed) {
    if (image.is_string() && !image.get_ref<const std::string&>().empty()) return true;
  }
  return false;
}

/// True for a body over the profile's size cap (Ollama's 64 KiB for a body without images),
/// found by a scan of its top-level members: it is refused with 413 before it is parsed,
/// and never kept in the log.
bool too_large(MockProfile shape, const std::string& text) {
  return shape == MockProfile::ollama && text.size() > ollama_text_body_bytes &&
         !carries_an_image(text);
}

}  // namespace

std::optional<Json> parse_body(std::string_view text, std::string& problem) {
  auto parsed = clef::parse_json(text, "the request body");
  if (!parsed) {
    problem = parsed.error().message + " (" + parsed.error().where + ")";
    return std::nullopt;
  }
  return std::move(parsed).value();
}

Decoded decode(MockProfile shape, const std::string& text) {
  Decoded out;
  out.too_large = too_large(shape, text);
  if (out.too_large) return out;
  out.body = parse_body(text, out.problem);
  if (!out.body || !out.body->is_object()) return out;
  out.model = detail::string_field(*out.body, "model");
  if (shape == MockProfile::openai) {  // OpenAI's "input" in place of "state"
    const auto input = out.body->find("input");
    out.state_text = input == out.body->end() ? "" : openai_input_text(*input);
    out.state_json = clef::dump_json(Json(out.state_text));
    return out;
  }
  const auto state = out.body->find("state");
  if (state != out.body->end()) {
    out.state_json = clef::dump_json(*state);
    out.state_text = state->is_string() ? state->get<std::string>() : out.state_json;
  }
  return out;
}

}  // namespace clef::mock_detail
