// MockPattern: a rule's `match`, compiled with RE2 under a length and a memory cap.
#include <re2/re2.h>

#include <stdexcept>

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

}  // namespace clef
