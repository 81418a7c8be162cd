// The clef executable's stderr: diagnostics that never hold a run a signal has ended. A reader
// that stops reading (a paused pager, Ctrl-S on a terminal, a pipe nobody drains) blocks a
// write; once SIGINT or SIGTERM has come, what does not fit at once is dropped instead.
#pragma once

#include <atomic>
#include <mutex>
#include <streambuf>
#include <string>
#include <string_view>

namespace clef::cli {

class InterruptibleStderr final : public std::streambuf {
 public:
  /// Writes to `fd`; after `stop` turns true, waits for room no longer.
  InterruptibleStderr(int fd, const std::atomic<bool>* stop) : m_fd(fd), m_stop(stop) {}
  /// Writes what is still deferred.
  ~InterruptibleStderr() override;
  InterruptibleStderr(const InterruptibleStderr&) = delete;
  InterruptibleStderr& operator=(const InterruptibleStderr&) = delete;

  /// Keeps `text` to write later, with whatever else is kept, in one write: at
  /// write_deferred(), or before anything written through the stream after it (which never
  /// overtakes it). -v's lines from the event loop go this way, written once per loop turn
  /// rather than once each. Any thread.
  void defer(std::string_view text);
  /// Writes what defer() kept.
  void write_deferred();

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize size) override;

 private:
  /// Writes all of it unless a signal came while waiting for room; false on a write error.
  bool write_out(const char* text, std::size_t size);

  /// Under m_mutex: what defer() kept, written now.
  void write_kept();

  int m_fd;
  const std::atomic<bool>* m_stop;
  std::mutex m_mutex;  ///< Over m_kept and every write: nothing overtakes what was kept.
  std::string m_kept;
};

}  // namespace clef::cli
