#include "mock_http.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace clef::mock_detail {
namespace {

using Clock = std::chrono::steady_clock;

/// Set on a connection's thread when its request was refused unread: the connection then closes
/// after the answer (what is left of the request would otherwise be read as the next one).
thread_local bool t_close_connection = false;

/// Runs each connection on a thread of its own, up to `max_threads` at once (cpp-httplib's pool
/// has a fixed 64: 64 idle or slow connections and nobody else was answered). A thread idle for
/// a while exits, so a burst of connections does not leave its threads behind.
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(const std::atomic<std::size_t>& max_threads)
      : m_state(std::make_shared<State>()), m_max_threads(max_threads) {}
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> job) override {
    std::lock_guard<std::mutex> lock(m_state->mutex);
    m_state->jobs.push_back(std::move(job));
    if (m_state->jobs.size() > m_state->idle && m_state->threads < m_max_threads.load()) {
      ++m_state->threads;
      // Detached, owning the shared state: shutdown() waits for every thread to leave it.
      std::thread([state = m_state] {
        // Named, so a process that hosts the mock can tell its threads from its own.
        pthread_setname_np(pthread_self(), "clef-mock-conn");
        work(*state);
      }).detach();
    }
    m_state->ready.notify_one();
  }

  void shutdown() override {
    std::unique_lock<std::mutex> lock(m_state->mutex);
    m_state->stopping = true;
    m_state->ready.notify_all();
    m_state->gone.wait(lock, [&] { return m_state->threads == 0; });
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable ready;
    std::condition_variable gone;
    std::deque<std::function<void()>> jobs;
    std::size_t threads = 0;
    std::size_t idle = 0;
    bool stopping = false;
  };

  static void work(State& state) {
    std::unique_lock<std::mutex> lock(state.mutex);
    for (;;) {
      ++state.idle;
      const bool woken = state.ready.wait_for(
          lock, std::chrono::seconds(10), [&] { return state.stopping || !state.jobs.empty(); });
      --state.idle;
      if (state.jobs.empty() && (state.stopping || !woken)) break;
      if (state.jobs.empty()) continue;
      auto job = std::move(state.jobs.front());
      state.jobs.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
    --state.threads;
    state.gone.notify_all();
  }

  std::shared_ptr<State> m_state;
  const std::atomic<std::size_t>& m_max_threads;
};

/// Waits until `sock` is ready for `events` or `until` passes; false on timeout, on a poll
/// failure and when the server stops (`listening` closed), which short slices notice promptly.
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

/// Bytes a connection received and has not yet handed to a request: kept across its requests,
/// so a pipelined request is not lost with the stream that read it.
struct ConnectionInput {
  std::vector<char> bytes = std::vector<char>(16 * 1024);
  std::size_t begin = 0;
  std::size_t end = 0;
  bool empty() const { return begin == end; }
};

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

/// One request's view of a connection: reads end at the request's deadline (from its first
/// byte) or past its byte budget, writes at the response's deadline, and both when the server
/// stops. cpp-httplib's SocketStream bounds only each read (5 s), not the request.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int sock, ConnectionInput& input, std::chrono::milliseconds window,
                 std::size_t read_budget, std::chrono::milliseconds per_call,
                 const std::atomic<int>& listening)
      : m_sock(sock),
        m_input(input),
        m_window(window),
        m_read_deadline(Clock::now() + window),
        m_read_budget(read_budget),
        m_per_call(per_call),
        m_listening(listening) {}

  bool is_readable() const override {
    return !m_input.empty() || wait_for(m_sock, POLLIN, read_until(), m_listening);
  }

  bool is_writable() const override {
    if (!wait_for(m_sock, POLLOUT, write_until(), m_listening)) return false;
    pollfd state{m_sock, POLLOUT, 0};
    return ::poll(&state, 1, 0) == 1 && (state.revents & (POLLERR | POLLHUP)) == 0;
  }

  ssize_t read(char* out, std::size_t size) override {
    if (m_read >= m_read_budget) {  // the request is larger than any accepted one
      t_close_connection = true;
      return -1;
    }
    size = std::min(size, m_read_budget - m_read);
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
    std::memcpy(out, m_input.bytes.data() + m_input.begin, count);
    m_input.begin += count;
    m_read += count;
    return static_cast<ssize_t>(count);
  }

  ssize_t write(const char* data, std::size_t size) override {
    if (!m_write_deadline) m_write_deadline = Clock::now() + m_window;
    if (!wait_for(m_sock, POLLOUT, write_until(), m_listening)) return -1;
    ssize_t n;
    do {
      n = ::send(m_sock, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;  // write_data retries
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(m_sock, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(m_sock, false, ip, port);
  }
  socket_t socket() const override { return m_sock; }

 private:
  Clock::time_point read_until() const {
    return std::min(m_read_deadline, Clock::now() + m_per_call);
  }
  Clock::time_point write_until() const {
    const auto per_call = Clock::now() + m_per_call;
    return m_write_deadline ? std::min(*m_write_deadline, per_call) : per_call;
  }

  int m_sock;
  ConnectionInput& m_input;
  std::chrono::milliseconds m_window;
  Clock::time_point m_read_deadline;
  std::optional<Clock::time_point> m_write_deadline;
  std::size_t m_read_budget;
  std::size_t m_read = 0;
  std::chrono::milliseconds m_per_call;
  const std::atomic<int>& m_listening;
};

}  // namespace

BoundedHttpServer::BoundedHttpServer(std::size_t max_body_bytes)
    : m_max_request_bytes(max_body_bytes + max_head_bytes) {
  new_task_queue = [this] { return new ConnectionThreads(m_max_connections); };
  set_payload_max_length(max_body_bytes);
  // A body announced larger than the cap is refused from its headers, before any of it is read
  // (cpp-httplib would read it all to skip it), and before "100 Continue" invites it.
  auto refuse_too_large = [max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    const std::string length = req.get_header_value("Content-Length");
    if (length.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(length.c_str(), &end, 10);
    if (errno == 0 && *end == '\0' && bytes <= max_body_bytes) return false;
    res.status = 413;  // the error handler writes the profile's body
    t_close_connection = true;
    return true;
  };
  set_expect_100_continue_handler(
      [refuse_too_large](const httplib::Request& req, httplib::Response& res) {
        return refuse_too_large(req, res) ? 413 : 100;
      });
  set_pre_routing_handler([refuse_too_large](const httplib::Request& req, httplib::Response& res) {
    return refuse_too_large(req, res) ? HandlerResponse::Handled : HandlerResponse::Unhandled;
  });
}

int BoundedHttpServer::listen_on_loopback(int port) {
  const std::string where = "127.0.0.1:" + std::to_string(port);
  const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    throw std::runtime_error("cannot open a socket: " + std::string(std::strerror(errno)));
  // SO_REUSEADDR lets a restarted server take its port back from connections in TIME_WAIT.
  // Not SO_REUSEPORT (cpp-httplib's default): with it a second server binds a port that is in
  // use and the kernel splits the connections between the two.
  const int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  // A backlog of 1024, as real servers use (cpp-httplib's is 5: a client opening 16
  // connections at once lost SYNs and waited a second for the retransmit).
  if (::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(sock, 1024) != 0) {
    const int error = errno;
    ::close(sock);
    if (error == EADDRINUSE) {
      throw std::runtime_error("cannot listen on " + where +
                               ": the port is in use (another server listens there); stop it, "
                               "or pick another port (0 picks a free one)");
    }
    throw std::runtime_error("cannot listen on " + where + ": " + std::strerror(error));
  }
  socklen_t length = sizeof address;
  ::getsockname(sock, reinterpret_cast<sockaddr*>(&address), &length);
  svr_sock_ = sock;
  return ntohs(address.sin_port);
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
    t_close_connection = false;
    ok = process_request(stream, left == 1, closed, {});
    if (!ok || closed || t_close_connection) break;
  }
  if (t_close_connection) linger(sock);
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
