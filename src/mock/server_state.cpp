// A running MockServer's state: set up with its routes, served on its own thread, stopped.
#include "mock/server_state.hpp"

#include <pthread.h>

#include <chrono>
#include <system_error>

#include "mock/routes.hpp"

namespace clef::mock_detail {

ServerState::ServerState(MockProfile shape) : profile(shape) {
  http.set_keep_alive_max_count(1000000);
  add_routes(*this);
}

ServerState::~ServerState() {
  {
    std::lock_guard<std::mutex> lock(m_stop_mutex);
    m_stopping = true;
  }
  m_stopped.notify_all();  // requests waiting out their latency end now
  http.stop();
  if (thread.joinable()) thread.join();
}

bool ServerState::wait_latency(std::chrono::milliseconds latency) {
  std::unique_lock<std::mutex> lock(m_stop_mutex);
  return !m_stopped.wait_for(lock, latency, [this] { return m_stopping; });
}

Result<int> ServerState::serve(int port) {
  auto bound = http.listen_on_loopback(port);
  if (!bound) return bound;
  try {
    thread = std::thread([this] {
      // Named before it accepts: Linux gives a new thread its creator's name, so the connection
      // threads this one starts are the mock's from their first instant, not only once they run.
      pthread_setname_np(pthread_self(), "clef-mock-http");
      http.listen_after_bind();
    });
  } catch (const std::system_error& e) {
    http.close_listener();
    return make_error(ErrorKind::connection_failed,
                      "cannot start the mock's thread: " + std::string(e.what()));
  }
  while (!http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return bound;
}

}  // namespace clef::mock_detail
