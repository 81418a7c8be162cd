// Internal: one request's view of a mock connection — reads and writes bounded by a deadline
// and a byte budget, where cpp-httplib's SocketStream bounds only each read (5 s).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>

namespace clef::mock_detail {

using Clock = std::chrono::steady_clock;

/// Waits until `sock` is ready for `events` or `until` passes; false on timeout, on a poll
/// failure and when the server stops (`listening` closed), which short slices notice promptly.
bool wait_for(int sock, short events, Clock::time_point until, const std::atomic<int>& listening);

/// Marks the request on this thread as refused unread: its connection then closes after the
/// answer (what is left of the request would otherwise be read as the next one).
void close_after_answer();
/// Whether close_after_answer() was called on this thread since clear_close_after_answer().
bool closes_after_answer();
void clear_close_after_answer();

/// Bytes a connection received and has not yet handed to a request: kept across its requests,
/// so a pipelined request is not lost with the stream that read it.
struct ConnectionInput {
  std::vector<char> bytes = std::vector<char>(16 * 1024);
  std::size_t begin = 0;
  std::size_t end = 0;
  bool empty() const { return begin == end; }
};

/// One request's view of a connection: reads end at the request's deadline (from its first
/// byte) or past its byte budget, writes at the response's deadline, and both when the server
/// stops. cpp-httplib's SocketStream bounds only each read (5 s), not the request.
class DeadlineStream final : public httplib::Stream {
 public:
  /// What one request may read: `whole` bytes in all, `head` of them before the blank line that
  /// ends its headers.
  struct Budget {
    std::size_t whole;
    std::size_t head;
  };
  DeadlineStream(int sock, ConnectionInput& input, std::chrono::milliseconds window,
                 Budget read_budget, std::chrono::milliseconds per_call,
                 const std::atomic<int>& listening);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* out, std::size_t size) override;
  ssize_t write(const char* data, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return m_sock; }

 private:
  Clock::time_point read_until() const;
  Clock::time_point write_until() const;
  /// Follows the head through the bytes handed out: false once it is past its budget unended.
  bool head_within_budget(const char* bytes, std::size_t count);

  int m_sock;
  ConnectionInput& m_input;
  std::chrono::milliseconds m_window;
  Clock::time_point m_read_deadline;
  std::optional<Clock::time_point> m_write_deadline;
  Budget m_read_budget;
  std::size_t m_read = 0;
  bool m_head_ended = false;
  std::uint32_t m_last_four = 0;  ///< The last four bytes handed out, to find "\r\n\r\n".
  std::chrono::milliseconds m_per_call;
  const std::atomic<int>& m_listening;
};

}  // namespace clef::mock_detail
