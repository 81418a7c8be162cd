// clef: the typed answers a decision model returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "clef/cost.hpp"
#include "clef/export.hpp"
#include "clef/question.hpp"

namespace clef {

struct OptionProbability {
  std::string label;
  double probability = 0;
};

/// Answer to a choice question. `probabilities` follows the question's option order,
/// whatever order the server sent its keys in.
struct ChoiceAnswer {
  std::string choice;      ///< The most likely label (ties: the first in option order).
  double probability = 0;  ///< P(choice).
  std::vector<OptionProbability> probabilities;
  std::optional<double> server_confidence;  ///< As the server reported it (formulas differ).
  double confidence = 0;                    ///< clef's own, for every server: 1 − H(p)/ln N.
};

enum class Verdict { yes, no, unknown };
/// "yes", "no" or "unknown".
CLEF_API const char* to_string(Verdict verdict) noexcept;

/// Answer to a yes/no/unknown question ("noul" on the wire).
struct YesNoAnswer {
  double p_true = 0;
  Verdict verdict = Verdict::unknown;  ///< From p_true and VerdictThresholds (options.hpp).
  double confidence = 0;               ///< clef's own: 1 − H(p_true)/ln 2.
};

/// The name of YesNoAnswer before 0.2.
using NoulAnswer [[deprecated("clef::YesNoAnswer")]] = YesNoAnswer;

/// Answer to a score question.
struct ScoreAnswer {
  double score = 0;                   ///< Expected level Σ i·pᵢ, as the server reported it.
  std::vector<double> probabilities;  ///< probabilities[i] = P(level i), lowest first.
  int most_likely_level = 0;          ///< argmax of probabilities (ties: the lower level).
  /// The question's description of most_likely_level ("Urgent"): what people and gates read.
  std::string most_likely_label;
  /// Every level's description, lowest first (the question's levels), for showing the scale.
  std::vector<std::string> labels;
  std::optional<double> server_confidence;
  double confidence = 0;  ///< clef's own: 1 − H(p)/ln N.
};

/// Answer to a box question: the edges of a box around what its instructions describe, each a
/// fraction of the image measured from its top-left corner (top and bottom of its height, left
/// and right of its width). clef refuses, never clamps, other geometry: every edge finite and in
/// [0, 1], top < bottom and left < right, else the answer is invalid.
struct BoxAnswer {
  double top = 0;
  double bottom = 0;
  double left = 0;
  double right = 0;
  double confidence = 0;  ///< As the server reported it, in [0, 1] (a box has no probabilities).

  double width() const noexcept { return right - left; }
  double height() const noexcept { return bottom - top; }
};

/// The intersection over union of two boxes: 1 when they are the same, 0 when they do not
/// overlap.
CLEF_API double intersection_over_union(const BoxAnswer& a, const BoxAnswer& b) noexcept;

enum class AnswerStatus {
  ok,          ///< A valid answer of the asked type.
  missing,     ///< The server sent no answer for this question.
  refused,     ///< The server answered {"type": "refusal"}.
  wrong_type,  ///< The answer's type is not the question's.
  invalid,     ///< Probabilities missing, out of range, not summing to 1, or a wrong winner.
  /// A valid answer below its Policy threshold (policy.hpp): the value is kept, for a person to
  /// see, but it is not to be acted on unattended.
  abstained,
};
/// "ok", "missing", "refused", "wrong_type", "invalid" or "abstained".
CLEF_API const char* to_string(AnswerStatus status) noexcept;

/// One question's answer, or why there is none. Never a silent default.
struct CLEF_API Answer {
  std::string question;
  QuestionType asked = QuestionType::choice;
  AnswerStatus status = AnswerStatus::missing;
  std::string problem;        ///< Why the status is not ok (the server's refusal text, ...).
  bool renormalized = false;  ///< Rounded probabilities were rescaled to sum to 1.
  std::variant<std::monostate, ChoiceAnswer, YesNoAnswer, ScoreAnswer, BoxAnswer> value;
  std::string raw_json;             ///< The answer object exactly as sent (empty when missing).
  std::optional<double> threshold;  ///< abstained: the Policy threshold it fell below.

  bool ok() const noexcept { return status == AnswerStatus::ok; }
  const ChoiceAnswer* choice() const noexcept { return std::get_if<ChoiceAnswer>(&value); }
  const YesNoAnswer* yes_no() const noexcept { return std::get_if<YesNoAnswer>(&value); }
  const ScoreAnswer* score() const noexcept { return std::get_if<ScoreAnswer>(&value); }
  const BoxAnswer* box() const noexcept { return std::get_if<BoxAnswer>(&value); }
  [[deprecated("Answer::yes_no()")]] const YesNoAnswer* noul() const noexcept { return yes_no(); }

  /// True when there is a valid value: ok, or abstained (valid but below its threshold).
  bool has_value() const noexcept { return !std::holds_alternative<std::monostate>(value); }

  /// The winning label for scripts: the choice label, "yes"/"no"/"unknown", or the most likely
  /// score level's label ("Urgent"; ScoreAnswer::most_likely_level has its index), a box's edges
  /// as "top,bottom,left,right" (the form clef eval's gold takes); empty without a value.
  std::string winner() const;
  /// The winner's probability (for yes/no, P(verdict side); for a box, its confidence); 0
  /// without a value.
  double winner_probability() const noexcept;
  /// clef's confidence for any type; 0 without a value.
  double confidence() const noexcept;
};

struct Usage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;  ///< 0 on Ollama and llama.cpp.
  /// Of input_tokens, those read from the server's prompt cache (usage.input_tokens_details.
  /// cached_tokens: OpenAI, OpenRouter); 0 when the server does not say.
  std::int64_t cached_input_tokens = 0;
};

/// The whole response to one request.
/// What Cloudflare AI Gateway said about a decision it passed on (ClientOptions::gateway).
struct GatewayReport {
  std::string cache_status;  ///< cf-aig-cache-status as sent: "HIT", "MISS" (empty: none sent).
  std::string log_id;        ///< cf-aig-log-id: the request in the gateway's logs.
};

struct CLEF_API Decision {
  std::string model;  ///< As the server reported it ("clef-flash", "jev-1.13.0").
  Usage usage;
  std::string request_id;       ///< From the server's request id header, if any.
  std::vector<Answer> answers;  ///< One per question, in question order.
  std::string raw_json;         ///< The response body (inside Workers AI's envelope).
  /// From the first attempt to the parsed response, retries and their waits included.
  std::chrono::microseconds latency{0};
  /// Answered from a cache (cache.hpp) rather than by the server.
  bool cached = false;
  /// The base URL of the server that answered, when run_batch had several hosts; else empty.
  std::string host;
  /// Through AI Gateway: what the gateway reported (its cache, its log id); else empty.
  std::optional<GatewayReport> gateway;
  /// What it cost and how clef knows (cost.hpp): measured by the server, computed from its
  /// tokens and a price, nothing (a cache hit), or unknown.
  Cost cost;

  /// The answer for `question`, or nullptr.
  const Answer* answer(std::string_view question) const noexcept;
  /// True when every answer is ok.
  bool all_ok() const noexcept;
};

}  // namespace clef
