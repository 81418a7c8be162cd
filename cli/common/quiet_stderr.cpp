// The implementation of quiet_stderr.hpp.
#include "common/quiet_stderr.hpp"

namespace clef::cli {
namespace {

bool starts_with(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}

/// The most of one line held: a line longer than this is judged by its start, and cut.
constexpr std::size_t max_line = 64 * 1024;

}  // namespace

QuietStderr::~QuietStderr() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!m_line.empty()) end_line();
}

QuietStderr::int_type QuietStderr::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char one = traits_type::to_char_type(c);
  xsputn(&one, 1);
  return c;
}

std::streamsize QuietStderr::xsputn(const char* text, std::streamsize size) {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (std::streamsize i = 0; i < size; ++i) {
    const char c = text[i];
    // A progress bar redraws its line with \r: each redraw ends a line, and is dropped.
    if (c == '\n' || c == '\r') {
      end_line();
    } else if (m_line.size() < max_line) {
      m_line += c;  // what is past the cap is dropped: the line's start says what it is
    }
  }
  return size;
}

int QuietStderr::sync() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_err.flush();
  return 0;
}

void QuietStderr::end_line() {
  // A failed --require is why the exit code is 1: a script needs to see which one.
  const bool problem = starts_with(m_line, "clef: error") || starts_with(m_line, "clef: warning") ||
                       starts_with(m_line, "clef mock: error") ||
                       starts_with(m_line, "clef: requirement failed");
  // An error's next step is the next line ("clef: is Ollama running at …?"); -v's lines were
  // asked for by name.
  const bool hint = m_after_problem && starts_with(m_line, "clef: ");
  const bool verbose = starts_with(m_line, "clef: >") || starts_with(m_line, "clef: <");
  if (problem || hint || verbose) {
    m_err << m_line << '\n';
    m_err.flush();
  }
  m_after_problem = problem;
  m_line.clear();
}

}  // namespace clef::cli
