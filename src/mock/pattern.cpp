// MockPattern: a rule's `match`, compiled with RE2 under a length and a memory cap.
#include <re2/re2.h>

#include "clef/mock.hpp"
#include "util/ascii.hpp"

namespace clef {

struct MockPattern::Compiled {
  explicit Compiled(const std::string& pattern, const RE2::Options& options)
      : re(pattern, options) {}
  RE2 re;
};

Result<MockPattern> MockPattern::compile(const std::string& pattern) {
  if (pattern.size() > max_length) {
    return make_error(ErrorKind::invalid_input, "the pattern is " + std::to_string(pattern.size()) +
                                                    " bytes; at most " +
                                                    std::to_string(max_length) + " are accepted");
  }
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  options.set_max_mem(max_memory);
  auto compiled = std::make_shared<Compiled>(pattern, options);
  if (!compiled->re.ok()) {
    // RE2's reason quotes the pattern: a rules file's control bytes must not reach a terminal.
    std::string why = detail::controls_shown(compiled->re.error());
    if (compiled->re.error_code() == RE2::ErrorPatternTooLarge) {
      why += " (it needs more than " + std::to_string(max_memory >> 10) + " KiB)";
    }
    return make_error(ErrorKind::invalid_input, std::move(why));
  }
  MockPattern out;
  out.m_text = pattern;
  out.m_compiled = std::move(compiled);
  return out;
}

std::size_t MockPattern::program_size() const {
  return m_compiled ? static_cast<std::size_t>(m_compiled->re.ProgramSize()) : 0;
}

bool MockPattern::found_in(std::string_view state) const {
  if (!m_compiled) return true;
  return RE2::PartialMatch(re2::StringPiece(state.data(), state.size()), m_compiled->re);
}

}  // namespace clef
