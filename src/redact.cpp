// The implementation of redact.hpp: the one redaction helper.
#include "redact.hpp"

#include <algorithm>

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

void Secrets::add(std::string_view secret) {
  if (secret.empty()) return;
  for (const auto& held : m_secrets) {
    if (held == secret) return;
  }
  m_secrets.emplace_back(secret);
  std::stable_sort(m_secrets.begin(), m_secrets.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string redact_all(std::string_view text, const Secrets& secrets) {
  std::string out(text);
  for (const auto& secret : secrets.m_secrets) out = redact(out, std::string_view(secret));
  return out;
}

void redact_decision(Decision& decision, const Secrets& secret) {
  if (secret.empty()) return;
  decision.model = redact_all(decision.model, secret);
  decision.request_id = redact_all(decision.request_id, secret);
  decision.raw_json = redact_all(decision.raw_json, secret);
  for (auto& answer : decision.answers) {
    answer.problem = redact_all(answer.problem, secret);
    answer.raw_json = redact_all(answer.raw_json, secret);
  }
}

}  // namespace clef::detail
