// Rules: reading a rules file (parse_mock_rules) and finding the rule that answers a question.
#include "mock/rules.hpp"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string_view>

#include "clef/json.hpp"
#include "mock/profile.hpp"
#include "util/ascii.hpp"

namespace clef {
namespace {

using Json = nlohmann::ordered_json;

/// A rule's fault: `where` names it ("rules[3]").
Error rule_error(const std::string& where, std::string message) {
  return make_error(ErrorKind::invalid_input, std::move(message), where);
}

/// Rule `r` of a rules file, or why not.
Result<MockRule> parse_rule(const Json& r, const std::string& where) {
  auto string_member = [&](const char* key) -> const std::string* {
    const auto it = r.find(key);
    return it != r.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
  };
  if (!r.is_object() || !string_member("question") || !string_member("match") ||
      !string_member("answer")) {
    return rule_error(where, "needs string \"question\", \"match\" and \"answer\"");
  }
  for (const auto& [key, value] : r.items()) {
    static constexpr std::string_view known[] = {"question", "match", "answer", "model",
                                                 "probability"};
    if (std::find(std::begin(known), std::end(known), key) == std::end(known)) {
      // A misspelt "probabilty" was a rule silently at the default 0.9.
      return rule_error(where, "has no \"" + detail::controls_shown(key.substr(0, 64)) +
                                   "\" key (a rule takes question, match, answer, model and "
                                   "probability)");
    }
  }
  if (r.contains("model") && !string_member("model")) {
    return rule_error(where, "\"model\" must be a string");
  }
  MockRule rule;
  if (const auto* model = string_member("model")) rule.model = *model;
  rule.question = *string_member("question");
  rule.answer = *string_member("answer");
  if (const auto p = r.find("probability"); p != r.end()) {
    const double value = p->is_number() ? p->get<double>() : -1;
    if (!(value >= 0 && value <= 1)) {
      return rule_error(where, "\"probability\" must be a number in [0, 1]");
    }
    rule.probability = value;
  }
  auto pattern = MockPattern::compile(*string_member("match"));
  if (!pattern) {
    return rule_error(
        where, "\"match\" is not an RE2 regular expression (" + pattern.error().message + ")");
  }
  rule.pattern = std::move(pattern).value();
  return rule;
}

}  // namespace

Result<std::vector<MockRule>> parse_mock_rules(const std::string& text) {
  if (text.size() > max_mock_rules_bytes) {
    return make_error(ErrorKind::invalid_input, "the rules file is too large: at most " +
                                                    std::to_string(max_mock_rules_bytes) +
                                                    " bytes are accepted");
  }
  auto parsed = parse_json(text, "the rules file");
  if (!parsed) return parsed.error();
  const auto& root = parsed.value();
  const auto list = root.is_object() ? root.find("rules") : root.end();
  if (!root.is_object() || list == root.end() || !list->is_array()) {
    return make_error(ErrorKind::invalid_input, "expected {\"rules\": [...]}");
  }
  if (list->size() > max_mock_rules) {
    return make_error(ErrorKind::invalid_input,
                      "it has " + std::to_string(list->size()) + " rules; at most " +
                          std::to_string(max_mock_rules) + " are accepted");
  }
  std::vector<MockRule> rules;
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto rule = parse_rule((*list)[i], "rules[" + std::to_string(i) + "]");
    if (!rule) return rule.error();
    rules.push_back(std::move(rule).value());
  }
  return rules;
}

}  // namespace clef

namespace clef::mock_detail {

const MockRule* rule_for(const std::vector<MockRule>& rules, const std::string& model,
                         const std::string& question, const std::string& state) {
  for (const auto& rule : rules) {
    if (!rule.model.empty() && ollama_name(rule.model) != ollama_name(model)) continue;
    if (rule.question != question) continue;
    if (rule.pattern.found_in(state)) return &rule;
  }
  return nullptr;
}

std::uint64_t rule_work(const std::vector<MockRule>& rules, const Decoded& decoded) {
  if (rules.empty() || !decoded.body || !decoded.body->is_object()) return 0;
  const auto questions = decoded.body->find("questions");
  if (questions == decoded.body->end() || !questions->is_object()) return 0;
  std::uint64_t program = 0;
  for (const auto& item : questions->items()) {
    for (const auto& rule : rules) {
      if (!rule.model.empty() && ollama_name(rule.model) != ollama_name(decoded.model)) continue;
      if (rule.question == item.key()) program += rule.pattern.program_size();
    }
  }
  const std::uint64_t bytes = decoded.state_text.size();
  // Saturating: a product past 2^64 is only "too much".
  if (bytes != 0 && program > UINT64_MAX / bytes) return UINT64_MAX;
  return program * bytes;
}

bool any_rule_covers(const std::vector<MockRule>& rules, const Decoded& decoded) {
  if (rules.empty() || !decoded.body || !decoded.body->is_object()) return false;
  const auto questions = decoded.body->find("questions");
  if (questions == decoded.body->end() || !questions->is_object()) return false;
  for (const auto& item : questions->items()) {
    if (rule_for(rules, decoded.model, item.key(), decoded.state_text)) return true;
  }
  return false;
}

}  // namespace clef::mock_detail
