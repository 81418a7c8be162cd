// The implementation of interruptible_stderr.hpp.
#include "common/interruptible_stderr.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace clef::cli {
namespace {

/// At most this much per write: a pipe that polls writable has room for it, so the write
/// itself does not block.
constexpr std::size_t chunk_bytes = 4096;

/// How often a wait for room looks at the signal flag.
constexpr int look_every_ms = 50;

/// A non-blocking description of its own of what `fd` names, when writing to it may wait.
int open_unwaiting(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !(S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode))) return -1;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

}  // namespace

KeptLines::KeptLines(int fd, const std::atomic<bool>* stop)
    : m_fd(fd), m_unwaiting(open_unwaiting(fd)), m_stop(stop) {}

KeptLines::~KeptLines() {
  if (m_unwaiting >= 0) ::close(m_unwaiting);
}

std::shared_ptr<KeptLines> kept_lines_of(const std::ostream& stream) {
  const auto* buffer = dynamic_cast<const InterruptibleStderr*>(stream.rdbuf());
  return buffer ? buffer->kept_lines() : nullptr;
}

void KeptLines::keep(std::string_view text) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_closed) return;
  // Once full, nothing more until half is written: else the short messages that still fit
  // would come out between gaps, their requests' lines left out.
  const bool still_full = m_left_out > 0 && m_kept.size() > kMostKept / 2;
  if (still_full || m_kept.size() + text.size() > kMostKept) {
    ++m_left_out;
    return;
  }
  tell_left_out_locked();
  m_kept.append(text);
}

void KeptLines::tell_left_out_locked() {
  if (m_left_out == 0) return;
  m_kept += "clef: -v: " + std::to_string(m_left_out) +
            " messages left out here: stderr was not being read\n";
  m_left_out = 0;
}

void KeptLines::write_kept() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_closed) return;
  m_kept.erase(0, write_without_waiting(m_kept.data(), m_kept.size()));
}

bool KeptLines::write_if_room(std::string_view text) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_closed) return false;
  m_kept.erase(0, write_without_waiting(m_kept.data(), m_kept.size()));
  if (!m_kept.empty()) return false;
  return write_without_waiting(text.data(), text.size()) == text.size();
}

std::size_t KeptLines::write_without_waiting(const char* text, std::size_t size) {
  const int fd = m_unwaiting >= 0 ? m_unwaiting : m_fd;
  std::size_t written = 0;
  while (written < size) {
    if (m_unwaiting < 0) {
      pollfd room{m_fd, POLLOUT, 0};
      if (::poll(&room, 1, 0) <= 0 || (room.revents & POLLOUT) == 0) break;
    }
    const ssize_t wrote = ::write(fd, text + written, std::min(size - written, chunk_bytes));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0 && errno == EAGAIN) break;
    if (wrote <= 0) return size;  // a failed write loses these lines only
    written += static_cast<std::size_t>(wrote);
  }
  return written;
}

bool KeptLines::write_now(const char* text, std::size_t size) {
  std::lock_guard<std::mutex> lock(m_mutex);
  write_kept_locked();
  return write_out(text, size);
}

void KeptLines::close() {
  std::lock_guard<std::mutex> lock(m_mutex);
  write_kept_locked();
  m_closed = true;
}

void KeptLines::write_kept_locked() {
  if (m_closed) return;
  tell_left_out_locked();  // the run's last messages may be the ones left out
  if (m_kept.empty()) return;
  // A failed write loses these lines only: what is written next is tried on its own.
  write_out(m_kept.data(), m_kept.size());
  m_kept.clear();
}

InterruptibleStderr::~InterruptibleStderr() {
  m_lines->close();
}

InterruptibleStderr::int_type InterruptibleStderr::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char one = traits_type::to_char_type(c);
  return m_lines->write_now(&one, 1) ? c : traits_type::eof();
}

std::streamsize InterruptibleStderr::xsputn(const char* text, std::streamsize size) {
  return m_lines->write_now(text, static_cast<std::size_t>(size)) ? size : 0;
}

bool KeptLines::write_out(const char* text, std::size_t size) {
  while (size > 0) {
    // After a signal nothing waits: a line that does not fit at once is dropped.
    const bool stopping = m_stop && m_stop->load();
    pollfd room{m_fd, POLLOUT, 0};
    const int ready = ::poll(&room, 1, stopping ? 0 : look_every_ms);
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0 || (room.revents & POLLOUT) == 0) {
      if (room.revents & (POLLERR | POLLHUP | POLLNVAL)) return false;
      if (stopping) return true;  // dropped: the run is ending
      continue;
    }
    const ssize_t written = ::write(m_fd, text, std::min(size, chunk_bytes));
    if (written < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    text += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

}  // namespace clef::cli
