// BoundedHttpServer: cpp-httplib's server on the mock's own listener, connection threads and
// deadline-bound streams, refusing a body past the cap from its Content-Length.
#include "mock/http_server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "mock/http_stream.hpp"
#include "mock/http_threads.hpp"
#include "mock/loopback.hpp"

namespace clef::mock_detail {
namespace {

/// True when the request announces a body larger than `body_limit` (or an unreadable
/// length): it is then answered 413 and its connection closes.
bool refuse_too_large(const httplib::Request& req, httplib::Response& res, std::size_t body_limit) {
  const std::string length = req.get_header_value("Content-Length");
  if (length.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(length.c_str(), &end, 10);
  if (errno == 0 && *end == '\0' && bytes <= body_limit) return false;
  res.status = 413;  // the error handler writes the profile's body
  close_after_answer();
  return true;
}

}  // namespace

BoundedHttpServer::BoundedHttpServer(std::size_t body_limit)
    : m_max_request_bytes(body_limit + max_head_bytes) {
  new_task_queue = [this] { return new ConnectionThreads(m_max_connections); };
  set_payload_max_length(body_limit);
  // A body announced larger than the cap is refused from its headers, before any of it is read
  // (cpp-httplib would read it all to skip it), and before "100 Continue" invites it.
  set_expect_100_continue_handler(
      [body_limit](const httplib::Request& req, httplib::Response& res) {
        return refuse_too_large(req, res, body_limit) ? 413 : 100;
      });
  set_pre_routing_handler([body_limit](const httplib::Request& req, httplib::Response& res) {
    return refuse_too_large(req, res, body_limit) ? HandlerResponse::Handled
                                                  : HandlerResponse::Unhandled;
  });
}

Result<int> BoundedHttpServer::listen_on_loopback(int port) {
  auto sock = mock_detail::listen_on_loopback(port);
  if (!sock) return sock.error();
  svr_sock_ = *sock;
  return port_of(*sock);
}

void BoundedHttpServer::close_listener() {
  const int sock = svr_sock_.exchange(INVALID_SOCKET);
  if (sock != INVALID_SOCKET) ::close(sock);
}

bool BoundedHttpServer::process_and_close_socket(socket_t sock) {
  const int yes = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  ConnectionInput input;
  bool ok = false;
  const std::chrono::milliseconds per_call(read_timeout_sec_ * 1000);
  for (std::size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    // Idle between requests for at most the keep-alive timeout; the deadline starts with the
    // next request's first byte.
    const auto idle_until = Clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
    if (input.empty() && !wait_for(sock, POLLIN, idle_until, svr_sock_)) break;
    DeadlineStream stream(sock, input, std::chrono::milliseconds(m_deadline_ms.load()),
                          m_max_request_bytes, per_call, svr_sock_);
    bool closed = false;
    clear_close_after_answer();
    ok = process_request(stream, left == 1, closed, {});
    if (!ok || closed || closes_after_answer()) break;
  }
  if (closes_after_answer()) linger(sock);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

void BoundedHttpServer::linger(socket_t sock) const {
  // Closing with unread bytes makes the kernel send a reset, which can destroy the answer
  // before the client reads it. Say we are done, then read and drop what the client still
  // sends (it stops once it sees the answer), for a short while.
  ::shutdown(sock, SHUT_WR);
  const auto until = Clock::now() + std::chrono::seconds(2);
  std::vector<char> sink(64 * 1024);
  while (wait_for(sock, POLLIN, until, svr_sock_)) {
    const ssize_t n = ::recv(sock, sink.data(), sink.size(), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
  }
}

}  // namespace clef::mock_detail
