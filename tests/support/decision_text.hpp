// Every field of a Decision as one text, doubles to the bit (hexadecimal floating point): two
// readers of one reply agree when their texts are equal, and a test's failure shows where not.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "clef/decision.hpp"

namespace clef::test {

inline std::string exact(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", value);
  return text;
}

inline std::string exact(const std::optional<double>& value) {
  return value ? exact(*value) : std::string("none");
}

inline std::string answer_text(const Answer& a) {
  std::string out = a.question + " asked=" + to_string(a.asked) + " status=" + to_string(a.status) +
                    " problem=[" + a.problem + "] renormalized=" + (a.renormalized ? "1" : "0") +
                    " threshold=" + exact(a.threshold) + " raw=[" + a.raw_json + "]";
  if (const auto* choice = a.choice()) {
    out += " choice=" + choice->choice + " p=" + exact(choice->probability) +
           " server=" + exact(choice->server_confidence) + " conf=" + exact(choice->confidence);
    for (const auto& option : choice->probabilities) {
      out += " " + option.label + ":" + exact(option.probability);
    }
  } else if (const auto* yes_no = a.yes_no()) {
    out += " p_true=" + exact(yes_no->p_true) + " verdict=" + to_string(yes_no->verdict) +
           " conf=" + exact(yes_no->confidence);
  } else if (const auto* score = a.score()) {
    out += " score=" + exact(score->score) + " level=" + std::to_string(score->most_likely_level) +
           " label=" + score->most_likely_label + " server=" + exact(score->server_confidence) +
           " conf=" + exact(score->confidence);
    for (double p : score->probabilities) out += " " + exact(p);
    for (const auto& label : score->labels) out += " [" + label + "]";
  } else if (const auto* box = a.box()) {
    out += " box=" + exact(box->top) + "," + exact(box->bottom) + "," + exact(box->left) + "," +
           exact(box->right) + " conf=" + exact(box->confidence);
  }
  return out;
}

inline std::string decision_text(const Decision& d) {
  std::string out = "model=" + d.model + " in=" + std::to_string(d.usage.input_tokens) +
                    " out=" + std::to_string(d.usage.output_tokens) +
                    " cached_in=" + std::to_string(d.usage.cached_input_tokens) +
                    " request_id=" + d.request_id + " cost_usd=" + exact(d.cost.usd) +
                    " neurons=" + exact(d.cost.neurons) +
                    " cost_source=" + std::to_string(static_cast<int>(d.cost.source)) + " raw=[" +
                    d.raw_json + "]\n";
  for (const auto& answer : d.answers) out += "  " + answer_text(answer) + "\n";
  return out;
}

}  // namespace clef::test
