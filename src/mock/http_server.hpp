// Internal: the mock's HTTP server. cpp-httplib parses and routes requests; the connections are
// handled here so that no client can hold the server: a listening socket of its own (never
// shared through SO_REUSEPORT), a thread per connection, and a deadline and a byte budget on
// every request.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>

#include <httplib.h>

#include "clef/result.hpp"

namespace clef::mock_detail {

class BoundedHttpServer : public httplib::Server {
 public:
  /// Connections served at once unless set_max_connections() says otherwise; more wait for a
  /// thread.
  static constexpr std::size_t default_max_connections = 1024;
  /// Request line and headers, on top of the body cap: past it, before the blank line that ends
  /// them, the request is refused (400) and its connection closed. cpp-httplib keeps headers in
  /// a multimap it compares case by case, which took 10 s of a core for 100,000 short headers
  /// in a 1.2 MB head; 64 KiB (nginx takes 32, Go 1 MB) bounds that to milliseconds.
  static constexpr std::size_t max_head_bytes = 64u * 1024;

  explicit BoundedHttpServer(std::size_t max_body_bytes);

  /// Listens on 127.0.0.1:`port` (0: a free one) and returns the port, or why it cannot: a
  /// port anything already listens on is refused, never shared.
  Result<int> listen_on_loopback(int port);
  /// Closes the socket listen_on_loopback() opened, when it will not be served after all.
  void close_listener();

  void set_request_deadline(std::chrono::milliseconds deadline) {
    m_deadline_ms = deadline.count();
  }
  void set_max_connections(std::size_t connections) { m_max_connections = connections; }

 private:
  // cpp-httplib's per-connection loop, with DeadlineStream in place of its SocketStream (whose
  // 5 s timeout is per read, so a client sending a byte every few seconds held a thread for
  // ever).
  bool process_and_close_socket(socket_t sock) override;
  void linger(socket_t sock) const;

  std::size_t m_max_request_bytes;
  std::atomic<long long> m_deadline_ms{10'000};
  std::atomic<std::size_t> m_max_connections{default_max_connections};
};

}  // namespace clef::mock_detail
