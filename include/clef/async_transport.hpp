// clef: the HTTP seam without waiting — a request is started, and a handler runs when it ends.
// Client::submit and Client::decide_async (client.hpp) run on it; so can an application's own
// event-driven code.
//
//     auto loop = clef::make_curl_loop();  // one thread, one libcurl multi handle
//     clef::HttpRequest request;
//     request.method = "GET";
//     request.url = "http://127.0.0.1:11434/api/version";
//     loop->start(request, [](clef::Result<clef::HttpResponse> response) {
//       // runs on the loop thread, exactly once
//       if (response) std::cout << response->status << "\n";
//     });
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "clef/export.hpp"
#include "clef/transport.hpp"

namespace clef {

/// Receives the outcome of one exchange.
using ResponseHandler = std::function<void(Result<HttpResponse>)>;

/// Starts requests and returns at once; each one's handler runs later, exactly once, on a loop
/// thread of the transport — with the response, or with the error (ErrorKind::cancelled when
/// request.cancel turned true or the transport shut down with it in flight).
///
/// What a handler may do there: read the result, hand it on, start() or after() more work.
/// What it must not do: block (wait on a future of this transport, sleep, read a slow file):
/// every other request on that thread waits with it. An exception escaping a handler is
/// caught and discarded, so the loop goes on serving the other requests; catch your own.
///
/// Safe to call from any thread, a handler included. Destroying the last reference ends the
/// loop: work still queued or in flight is completed as cancelled, and pending after() tasks
/// run with `shutting_down` true.
class CLEF_API AsyncTransport {
 public:
  virtual ~AsyncTransport() = default;
  virtual void start(HttpRequest request, ResponseHandler done) = 0;
  /// Runs `task` on a loop thread once `delay` has passed: retries, backoff and pauses wait
  /// this way, never by holding a thread asleep.
  virtual void after(std::chrono::milliseconds delay,
                     std::function<void(bool shutting_down)> task) = 0;
  /// True on a thread whose waiting would stop this transport's work: a curl loop's own thread,
  /// or a driven loop's owner (the thread that last called its run_once(), inside it or not).
  /// Waiting there for the transport's own work waits for ever, so Client::decide() refuses
  /// instead, and run_batch throws. (A pool has other threads: false there.) A transport that
  /// wraps another says what the inner one says.
  virtual bool running_here() const { return false; }
};

/// libcurl's multi interface on `threads` loop threads (1 to the number of cores), each owning
/// one multi handle and its connection pool, driven by curl_multi_socket_action on an epoll
/// set and woken through an eventfd when work arrives.
/// Every guarantee of make_curl_transport() holds: TLS verification, no redirects, the size
/// caps, the timeouts, the proxy rules, cancellation.
CLEF_API std::shared_ptr<AsyncTransport> make_curl_loop(std::size_t threads = 1);

/// The same loop with no thread of its own, for an application that has an event loop already
/// (Asio, libuv, Qt, a poll() loop): the application watches descriptor() for reading and calls
/// run_once() when it turns readable or when timeout() has passed. Every handler — and so every
/// Client::submit callback on it (ClientOptions::async_transport) — runs inside run_once(), on
/// the application's thread: nothing of clef runs anywhere else.
///
///     auto loop = clef::make_driven_curl_loop();
///     // poll() loop: wait for loop->descriptor() to be readable, at most loop->timeout(), then
///     loop->run_once();
///
/// examples/asio_decisions.cpp drives it from standalone Asio. start() and after() may be called
/// from any thread (they wake the descriptor); the rest from the owning thread only. A request
/// in flight holds the loop (its client holds it), so nothing ends until the owner says so:
/// stop() completes what is in flight or queued as cancelled, on the spot, and runs pending
/// after() tasks with `shutting_down`; what is started later completes the same way at the
/// next run_once(). Destroying the last reference stops it too, on the destroying thread.
class CLEF_API DrivenCurlLoop : public AsyncTransport {
 public:
  /// An epoll descriptor: readable while clef has work (a socket ready, a request, timer or
  /// cancellation queued from another thread). Never read or close it; only wait on it.
  virtual int descriptor() const = 0;
  /// The longest to wait on descriptor() before calling run_once() anyway (curl's timeouts,
  /// retry timers): at most a second.
  virtual std::chrono::milliseconds timeout() const = 0;
  /// Does what is ready without waiting: starts queued requests, moves transfers on, runs the
  /// timers that are due and the handlers of what finished.
  virtual void run_once() = 0;
  /// Ends the loop here and now (see above).
  virtual void stop() = 0;
};

/// A DrivenCurlLoop: one libcurl multi handle, on the calling application's loop. Linux only
/// (epoll and eventfd), as make_curl_loop().
CLEF_API std::shared_ptr<DrivenCurlLoop> make_driven_curl_loop();

/// A blocking Transport (a test's, a decorator chain) behind the asynchronous interface: each
/// request runs on a pool thread, started when a request finds none idle (up to `max_threads`,
/// so at most that many are sent at once) and gone after a few idle seconds; timers run on one
/// more. Destroying it completes queued requests as cancelled; one being sent ends on its own.
CLEF_API std::shared_ptr<AsyncTransport> make_async_transport(std::shared_ptr<Transport> blocking,
                                                              std::size_t max_threads = 256);

}  // namespace clef
