// clef: one decision request — a state, named questions, optional images, audio and video.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "clef/export.hpp"
#include "clef/image.hpp"
#include "clef/media.hpp"
#include "clef/question.hpp"
#include "clef/result.hpp"
#include "clef/state.hpp"

namespace clef {

/// Ollama's keep_alive: how long the model stays loaded after the request.
class CLEF_API KeepAlive {
 public:
  /// Seconds; negative keeps the model loaded forever, 0 unloads it now.
  static KeepAlive seconds(long long seconds);
  /// A Go duration with a unit ("5m", "1h30m", "-1m"). A bare number such as "300" is read as
  /// seconds (Ollama refuses it as a string); anything else is invalid_input.
  static Result<KeepAlive> parse(std::string_view text);

  /// The wire value: a JSON number or a JSON string.
  const std::string& wire_json() const noexcept { return m_wire; }

 private:
  explicit KeepAlive(std::string wire) : m_wire(std::move(wire)) {}
  std::string m_wire;
};

/// Everything one call to Client::decide sends.
///
///     clef::DecisionRequest request;
///     request.state = clef::State::text("I was charged twice.");
///     request.questions.push_back(clef::Question::yes_no("refund", "Asks for a refund?"));
struct DecisionRequest {
  /// Empty means the client's default model (ClientOptions::model).
  std::string model;
  State state = State::text("");
  std::vector<Question> questions;
  std::vector<Image> images;
  /// TypeSafe's form (Jev models, and any request with a box question, on the systemone
  /// backend): images travel in an `assets` map, each under a reference that the model reads
  /// where the request's text names it — in the state, an instruction or a criterion, as
  /// {"photo": "image_1"} with "the mug in `photo`". One per image (1-64 characters of A-Z, a-z,
  /// 0-9, '_', '-'), or empty for image_1, image_2, … . A reference nothing names is refused
  /// before sending, as TypeSafe would refuse it.
  std::vector<std::string> image_references;
  /// Audio and video clips, for a model that takes them (clef-omni); refused before sending for
  /// any other model, and on Ollama.
  std::vector<MediaClip> audio;
  std::vector<MediaClip> videos;
  std::optional<KeepAlive> keep_alive;  ///< Ollama only; refused for Workers AI.

  /// Top-level fields this version of clef does not know, as (name, JSON text), sent as given
  /// after the known fields. A name clef already sends is refused rather than overwritten.
  std::vector<std::pair<std::string, std::string>> extra_fields;
};

}  // namespace clef
