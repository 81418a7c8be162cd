// --quiet: stderr with only what a script must see — errors and warnings, each with the hint
// line that follows it, and -v's lines when -v asked for them — and no progress or summaries.
#pragma once

#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>

namespace clef::cli {

class QuietStderr final : public std::streambuf {
 public:
  explicit QuietStderr(std::ostream& err) : m_err(err) {}
  ~QuietStderr() override;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize size) override;
  int sync() override;

 private:
  /// Passes on or drops the line collected so far. Called with m_mutex held.
  void end_line();

  std::ostream& m_err;
  std::mutex m_mutex;  ///< The loop thread's -v lines and the main thread's share the stream.
  std::string m_line;
  bool m_after_problem = false;  ///< The last line passed on was an error or a warning.
};

}  // namespace clef::cli
