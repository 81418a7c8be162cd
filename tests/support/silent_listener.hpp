// Test support: a TCP listener on 127.0.0.1 that never answers — the kernel completes
// connections into its backlog — for a client caught connecting, sending or waiting; or that
// answers one connection with raw bytes and closes it.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace clef::testing {

/// A socket listening on 127.0.0.1, on a port the kernel chose (set in `port`).
inline int listen_on_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(::listen(fd, 16), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  return fd;
}

/// accept_one() takes a connection, to see what the client has sent so far.
class SilentListener {
 public:
  SilentListener() { m_fd = listen_on_loopback(m_port); }
  ~SilentListener() {
    if (m_accepted >= 0) ::close(m_accepted);
    ::close(m_fd);
  }
  int port() const { return m_port; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  /// Accepts the next connection (within 10 s), closing the one accepted before; false if none
  /// came.
  bool accept_one() {
    pollfd ready{m_fd, POLLIN, 0};
    if (::poll(&ready, 1, 10'000) != 1) return false;
    if (m_accepted >= 0) ::close(m_accepted);
    m_accepted = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
    return m_accepted >= 0;
  }
  /// Writes `bytes` on the accepted connection and closes it: a reply no HTTP library writes.
  void send_and_close(const std::string& bytes) {
    (void)::send(m_accepted, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ::close(m_accepted);
    m_accepted = -1;
  }
  /// Bytes the client sent that are waiting, unread, on the accepted connection.
  int unread() const {
    int bytes = 0;
    ::ioctl(m_accepted, FIONREAD, &bytes);
    return bytes;
  }

 private:
  int m_fd = -1;
  int m_accepted = -1;
  int m_port = 0;
};

}  // namespace clef::testing
