// The clef executable's stderr: diagnostics that never hold a run a signal has ended. A reader
// that stops reading (a paused pager, Ctrl-S on a terminal, a pipe nobody drains) blocks a
// write; once SIGINT or SIGTERM has come, what does not fit at once is dropped instead.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace clef::cli {

/// The descriptor's writer, and the lines kept to write later in one write (-v's from the event
/// loop, once per loop turn rather than once each). Shared with whoever keeps lines: a loop's
/// task may run after the stream is gone (its thread can outlive main), and then writes nothing.
class KeptLines {
 public:
  KeptLines(int fd, const std::atomic<bool>* stop);
  ~KeptLines();
  KeptLines(const KeptLines&) = delete;
  KeptLines& operator=(const KeptLines&) = delete;
  /// Keeps `text` to write with whatever else is kept: at write_kept(), or before anything
  /// written through the stream after it (which never overtakes it). Any thread. Past
  /// kMostKept bytes waiting (a reader that stopped reading), texts are left out until half of
  /// it is written, and how many were is said where they would have been.
  void keep(std::string_view text);
  /// Writes what keep() kept as far as the descriptor takes it without waiting: a loop's turn
  /// must not wait for stderr's reader while the timeouts of the transfers it holds run on. The
  /// rest waits for the next call, or for the stream's next write. Nothing once the stream is
  /// gone.
  void write_kept();
  /// For a text the next one replaces (a progress line's redraw): written only when what is kept
  /// is out and it goes without waiting, else dropped (false). Any thread.
  bool write_if_room(std::string_view text);
  static constexpr std::size_t kMostKept = 16u << 20;

 private:
  friend class InterruptibleStderr;
  /// What the stream writes: what is kept first, then `text`.
  bool write_now(const char* text, std::size_t size);
  /// The stream is gone: what is kept is written, and nothing more after.
  void close();
  /// Under m_mutex: the kept lines, written now.
  void write_kept_locked();
  /// Under m_mutex: how many messages keep() left out, said where they would have been.
  void tell_left_out_locked();
  /// Writes all of it unless a signal came while waiting for room; false on a write error.
  bool write_out(const char* text, std::size_t size);
  /// Under m_mutex: as much of `text` as the descriptor takes now (a failed write: all of it,
  /// lost).
  std::size_t write_without_waiting(const char* text, std::size_t size);

  int m_fd;
  /// A description of its own of what m_fd names, made O_NONBLOCK (the shell's stays as it is),
  /// when that may wait: a terminal, a pipe, a FIFO. A terminal says it has room and then
  /// waits in a write anyway; this one says EAGAIN instead. -1: poll m_fd before each write.
  int m_unwaiting;
  const std::atomic<bool>* m_stop;
  std::mutex m_mutex;  ///< Over m_kept and every write: nothing overtakes what was kept.
  std::string m_kept;
  std::size_t m_left_out = 0;  ///< Texts keep() left out since it last kept one.
  bool m_closed = false;
};

/// Where clef's stderr keeps lines, or null when `stream` writes elsewhere (a test's stream).
std::shared_ptr<KeptLines> kept_lines_of(const std::ostream& stream);

class InterruptibleStderr final : public std::streambuf {
 public:
  /// Writes to `fd`; after `stop` turns true, waits for room no longer.
  InterruptibleStderr(int fd, const std::atomic<bool>* stop)
      : m_lines(std::make_shared<KeptLines>(fd, stop)) {}
  /// Writes what is still kept; kept lines held elsewhere write nothing from now on.
  ~InterruptibleStderr() override;
  InterruptibleStderr(const InterruptibleStderr&) = delete;
  InterruptibleStderr& operator=(const InterruptibleStderr&) = delete;

  /// Where to keep lines for a later write.
  std::shared_ptr<KeptLines> kept_lines() const { return m_lines; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize size) override;

 private:
  std::shared_ptr<KeptLines> m_lines;
};

}  // namespace clef::cli
