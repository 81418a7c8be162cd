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

/// The status a request's Content-Length refuses it with, before its body is read: 400 when
/// the body's end cannot be told (a length that is not digits alone, or two that differ: RFC
/// 9112 6.3, and what a second length would smuggle in), 413 past `body_limit`; 0 when it
/// may be read. A refused request's connection closes after the answer.
int refused_length(const httplib::Request& req, httplib::Response& res, std::size_t body_limit) {
  const auto lengths = req.headers.equal_range("Content-Length");
  if (lengths.first == lengths.second) return 0;
  const std::string& length = lengths.first->second;
  bool framed = !length.empty() && length.find_first_not_of("0123456789") == std::string::npos;
  for (auto other = lengths.first; other != lengths.second; ++other)
    framed = framed && other->second == length;
  const bool too_large =
      length.size() > 19 || std::strtoull(length.c_str(), nullptr, 10) > body_limit;
  const int refused = !framed ? 400 : too_large ? 413 : 0;
  if (refused == 0) return 0;  // the response's status is left to its handler
  res.status = refused;        // the error handler writes the profile's body
  res.set_header("Connection", "close");
  close_after_answer();
  return refused;
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
        const int refused = refused_length(req, res, body_limit);
        return refused != 0 ? refused : 100;
      });
  set_pre_routing_handler([body_limit](const httplib::Request& req, httplib::Response& res) {
    return refused_length(req, res, body_limit) != 0 ? HandlerResponse::Handled
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
                          {m_max_request_bytes, max_head_bytes}, per_call, svr_sock_);
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
