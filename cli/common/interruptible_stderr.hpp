// The clef executable's stderr: diagnostics that never hold a run a signal has ended. A reader
// that stops reading (a paused pager, Ctrl-S on a terminal, a pipe nobody drains) blocks a
// write; once SIGINT or SIGTERM has come, what does not fit at once is dropped instead.
#pragma once

#include <atomic>
#include <streambuf>

namespace clef::cli {

class InterruptibleStderr final : public std::streambuf {
 public:
  /// Writes to `fd`; after `stop` turns true, waits for room no longer.
  InterruptibleStderr(int fd, const std::atomic<bool>* stop) : m_fd(fd), m_stop(stop) {}

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize size) override;

 private:
  /// Writes all of it unless a signal came while waiting for room; false on a write error.
  bool write_out(const char* text, std::size_t size);

  int m_fd;
  const std::atomic<bool>* m_stop;
};

}  // namespace clef::cli
