// The implementation of redact.hpp: the one redaction helper.
#include "redact.hpp"

namespace clef::detail {

std::string redact(std::string_view text, std::string_view secret) {
  if (secret.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t from = 0;
  for (std::size_t at = text.find(secret); at != std::string_view::npos;
       at = text.find(secret, from)) {
    out.append(text, from, at - from);
    out += redacted_placeholder;
    from = at + secret.size();
  }
  out.append(text, from, std::string_view::npos);
  return out;
}

void redact_decision(Decision& decision, std::string_view secret) {
  if (secret.empty()) return;
  decision.model = redact(decision.model, secret);
  decision.request_id = redact(decision.request_id, secret);
  decision.raw_json = redact(decision.raw_json, secret);
  for (auto& answer : decision.answers) {
    answer.problem = redact(answer.problem, secret);
    answer.raw_json = redact(answer.raw_json, secret);
  }
}

}  // namespace clef::detail
