// MockPattern and rules files: the mock's scripted answers, matched with RE2.
#include <re2/re2.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "clef/json.hpp"
#include "clef/mock.hpp"

namespace clef {

struct MockPattern::Compiled {
  explicit Compiled(const std::string& pattern, const RE2::Options& options)
      : re(pattern, options) {}
  RE2 re;
};

std::optional<MockPattern> MockPattern::compile(const std::string& pattern, std::string& problem) {
  if (pattern.size() > max_length) {
    problem = "the pattern is " + std::to_string(pattern.size()) + " bytes; at most " +
              std::to_string(max_length) + " are accepted";
    return std::nullopt;
  }
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  options.set_max_mem(max_memory);
  auto compiled = std::make_shared<Compiled>(pattern, options);
  if (!compiled->re.ok()) {
    problem = compiled->re.error();
    if (compiled->re.error_code() == RE2::ErrorPatternTooLarge) {
      problem += " (it needs more than " + std::to_string(max_memory >> 10) + " KiB)";
    }
    return std::nullopt;
  }
  MockPattern out;
  out.m_text = pattern;
  out.m_compiled = std::move(compiled);
  return out;
}

MockPattern::MockPattern(const std::string& pattern) {
  std::string problem;
  auto compiled = compile(pattern, problem);
  if (!compiled) throw std::invalid_argument("not an RE2 pattern: " + problem);
  *this = std::move(*compiled);
}

bool MockPattern::found_in(std::string_view state) const {
  if (!m_compiled) return true;
  return RE2::PartialMatch(re2::StringPiece(state.data(), state.size()), m_compiled->re);
}

std::optional<std::vector<MockRule>> parse_mock_rules(const std::string& text,
                                                      std::string& problem) {
  if (text.size() > max_mock_rules_bytes) {
    problem = "the rules file is " + std::to_string(text.size()) + " bytes; at most " +
              std::to_string(max_mock_rules_bytes) + " are accepted";
    return std::nullopt;
  }
  auto parsed = parse_json(text, "the rules file");
  if (!parsed) {
    problem = parsed.error().message + " (" + parsed.error().where + ")";
    return std::nullopt;
  }
  const auto& root = parsed.value();
  const auto list = root.is_object() ? root.find("rules") : root.end();
  if (!root.is_object() || list == root.end() || !list->is_array()) {
    problem = "expected {\"rules\": [...]}";
    return std::nullopt;
  }
  if (list->size() > max_mock_rules) {
    problem = "it has " + std::to_string(list->size()) + " rules; at most " +
              std::to_string(max_mock_rules) + " are accepted";
    return std::nullopt;
  }
  std::vector<MockRule> rules;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const auto& r = (*list)[i];
    const std::string where = "rules[" + std::to_string(i) + "]";
    auto string_member = [&](const char* key) -> const std::string* {
      const auto it = r.find(key);
      return it != r.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
    };
    if (!r.is_object() || !string_member("question") || !string_member("match") ||
        !string_member("answer")) {
      problem = where + ": needs string \"question\", \"match\" and \"answer\"";
      return std::nullopt;
    }
    if (r.contains("model") && !string_member("model")) {
      problem = where + ": \"model\" must be a string";
      return std::nullopt;
    }
    MockRule rule;
    if (const auto* model = string_member("model")) rule.model = *model;
    rule.question = *string_member("question");
    rule.answer = *string_member("answer");
    if (const auto p = r.find("probability"); p != r.end()) {
      const double value = p->is_number() ? p->get<double>() : -1;
      if (!(value >= 0 && value <= 1)) {
        problem = where + ": \"probability\" must be a number in [0, 1]";
        return std::nullopt;
      }
      rule.probability = value;
    }
    std::string why;
    auto pattern = MockPattern::compile(*string_member("match"), why);
    if (!pattern) {
      problem = where + ": \"match\" is not an RE2 regular expression (" + why + ")";
      return std::nullopt;
    }
    rule.pattern = std::move(*pattern);
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace clef
