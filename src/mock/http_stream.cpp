// DeadlineStream: a mock connection's reads and writes, bounded by the request's deadline and
// byte budget and by the server stopping.
#include "mock/http_stream.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace clef::mock_detail {
namespace {

/// Set on a connection's thread when its request was refused unread.
thread_local bool t_close_connection = false;

void address_of(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* raw = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? ::getpeername(sock, raw, &length) : ::getsockname(sock, raw, &length)) != 0) return;
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (::getnameinfo(raw, length, host, sizeof host, service, sizeof service,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(service);
  }
}

}  // namespace

bool wait_for(int sock, short events, Clock::time_point until, const std::atomic<int>& listening) {
  for (;;) {
    if (listening.load() == INVALID_SOCKET) return false;
    const auto now = Clock::now();
    if (now >= until) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    pollfd ready{sock, events, 0};
    const int n = ::poll(&ready, 1, static_cast<int>(std::min<long long>(left + 1, 100)));
    if (n > 0) return true;  // including POLLHUP/POLLERR: the read or write then says so
    if (n < 0 && errno != EINTR) return false;
  }
}

void close_after_answer() {
  t_close_connection = true;
}

bool closes_after_answer() {
  return t_close_connection;
}

void clear_close_after_answer() {
  t_close_connection = false;
}

DeadlineStream::DeadlineStream(int sock, ConnectionInput& input, std::chrono::milliseconds window,
                               Budget read_budget, std::chrono::milliseconds per_call,
                               const std::atomic<int>& listening)
    : m_sock(sock),
      m_input(input),
      m_window(window),
      m_read_deadline(Clock::now() + window),
      m_read_budget(read_budget),
      m_per_call(per_call),
      m_listening(listening) {}

bool DeadlineStream::is_readable() const {
  return !m_input.empty() || wait_for(m_sock, POLLIN, read_until(), m_listening);
}

bool DeadlineStream::is_writable() const {
  if (!wait_for(m_sock, POLLOUT, write_until(), m_listening)) return false;
  pollfd state{m_sock, POLLOUT, 0};
  return ::poll(&state, 1, 0) == 1 && (state.revents & (POLLERR | POLLHUP)) == 0;
}

ssize_t DeadlineStream::read(char* out, std::size_t size) {
  if (m_read >= m_read_budget.whole) {  // the request is larger than any accepted one
    close_after_answer();
    return -1;
  }
  size = std::min(size, m_read_budget.whole - m_read);
  if (m_input.empty()) {
    if (!wait_for(m_sock, POLLIN, read_until(), m_listening)) return -1;
    ssize_t n;
    do {
      n = ::recv(m_sock, m_input.bytes.data(), m_input.bytes.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    m_input.begin = 0;
    m_input.end = static_cast<std::size_t>(n);
  }
  const std::size_t count = std::min(size, m_input.end - m_input.begin);
  if (!head_within_budget(m_input.bytes.data() + m_input.begin, count)) {
    close_after_answer();
    return -1;
  }
  std::memcpy(out, m_input.bytes.data() + m_input.begin, count);
  m_input.begin += count;
  m_read += count;
  return static_cast<ssize_t>(count);
}

ssize_t DeadlineStream::write(const char* data, std::size_t size) {
  if (!m_write_deadline) m_write_deadline = Clock::now() + m_window;
  if (!wait_for(m_sock, POLLOUT, write_until(), m_listening)) return -1;
  ssize_t n;
  do {
    n = ::send(m_sock, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;  // write_data retries
  return n;
}

void DeadlineStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  address_of(m_sock, true, ip, port);
}

void DeadlineStream::get_local_ip_and_port(std::string& ip, int& port) const {
  address_of(m_sock, false, ip, port);
}

bool DeadlineStream::head_within_budget(const char* bytes, std::size_t count) {
  if (m_head_ended) return true;
  constexpr std::uint32_t blank_line = 0x0D0A0D0A;  // "\r\n\r\n", the last byte lowest
  for (std::size_t i = 0; i < count; ++i) {
    m_last_four = m_last_four << 8 | static_cast<unsigned char>(bytes[i]);
    if (m_last_four == blank_line) {
      m_head_ended = true;
      return true;
    }
  }
  return m_read + count <= m_read_budget.head;
}

Clock::time_point DeadlineStream::read_until() const {
  return std::min(m_read_deadline, Clock::now() + m_per_call);
}

Clock::time_point DeadlineStream::write_until() const {
  const auto per_call = Clock::now() + m_per_call;
  return m_write_deadline ? std::min(*m_write_deadline, per_call) : per_call;
}

}  // namespace clef::mock_detail
