// Sockets on 127.0.0.1: the mock's listener, and the free and refusing ports tests ask for.
#include "mock/loopback.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "clef/mock.hpp"

namespace clef::mock_detail {
namespace {

sockaddr_in loopback_address(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  return address;
}

/// A TCP socket bound to 127.0.0.1 on a free port; -1 when that fails.
int bound_socket(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address = loopback_address(0);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  port = port_of(fd);
  if (port == 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

Error cannot_listen(int port, int error) {
  const std::string where = "127.0.0.1:" + std::to_string(port);
  if (error == EADDRINUSE) {
    return make_error(ErrorKind::invalid_input,
                      "cannot listen on " + where +
                          ": the port is in use (another server listens there); stop it, or "
                          "pick another port (0 picks a free one)");
  }
  const ErrorKind kind = error == EACCES ? ErrorKind::invalid_input : ErrorKind::connection_failed;
  return make_error(kind, "cannot listen on " + where + ": " + std::strerror(error));
}

}  // namespace

Result<int> listen_on_loopback(int port) {
  if (port < 0 || port > 65535) {
    return make_error(ErrorKind::invalid_input,
                      "cannot listen on 127.0.0.1:" + std::to_string(port) +
                          ": a port is a number from 0 to 65535");
  }
  const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) {
    return make_error(ErrorKind::connection_failed,
                      "cannot open a socket: " + std::string(std::strerror(errno)));
  }
  // SO_REUSEADDR lets a restarted server take its port back from connections in TIME_WAIT.
  // Not SO_REUSEPORT (cpp-httplib's default): with it a second server binds a port that is in
  // use and the kernel splits the connections between the two.
  const int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  sockaddr_in address = loopback_address(port);
  // A backlog of 1024, as real servers use (cpp-httplib's is 5: a client opening 16
  // connections at once lost SYNs and waited a second for the retransmit).
  if (::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(sock, 1024) != 0) {
    const int error = errno;
    ::close(sock);
    return cannot_listen(port, error);
  }
  return sock;
}

int port_of(int sock) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (::getsockname(sock, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  return ntohs(address.sin_port);
}

}  // namespace clef::mock_detail

namespace clef {

int unused_port() {
  int port = 0;
  const int fd = mock_detail::bound_socket(port);
  if (fd >= 0) ::close(fd);
  return port;
}

int refusing_port() {
  // Bound without listen(): the kernel answers every SYN with a reset. The descriptor is never
  // closed, so the port stays this process's until it exits.
  int port = 0;
  (void)mock_detail::bound_socket(port);
  return port;
}

}  // namespace clef
