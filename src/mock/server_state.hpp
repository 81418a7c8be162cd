// Internal: everything one running MockServer holds — its profile, HTTP server and thread,
// settings, request log and counters — shared by its routes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "clef/mock.hpp"
#include "mock/admission.hpp"
#include "mock/gateway.hpp"
#include "mock/http_server.hpp"
#include "mock/request_body.hpp"
#include "mock/request_log.hpp"
#include "mock/settings.hpp"

namespace clef::mock_detail {

struct ServerState {
  /// The server with its routes, not yet listening (see serve()).
  explicit ServerState(MockProfile shape);
  /// Stops listening and waits for the connections in progress.
  ~ServerState();
  ServerState(const ServerState&) = delete;
  ServerState& operator=(const ServerState&) = delete;

  /// Listens on 127.0.0.1:`port` and serves on a thread of its own; the port, or why not.
  Result<int> serve(int port);

  /// Waits out a request's model time, or until the server stops (SIGTERM must not wait for
  /// every sleeping request's latency); false when it stopped.
  bool wait_latency(std::chrono::milliseconds latency);

  const MockProfile profile;
  BoundedHttpServer http{max_body_bytes};
  std::thread thread;
  SettingsStore settings;
  RequestLog log;
  std::atomic<int> calls{0};
  std::atomic<long long> latency_ms{0};
  Admission admission;
  GatewayCache gateway_cache;  ///< workers-ai: AI Gateway's cache in front of it.

 private:
  std::mutex m_stop_mutex;
  std::condition_variable m_stopped;
  bool m_stopping = false;  // guarded by m_stop_mutex
};

}  // namespace clef::mock_detail
