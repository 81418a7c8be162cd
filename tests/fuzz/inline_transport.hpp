// Fuzz support: a blocking Transport run on the calling thread behind the asynchronous seam.
// decide() then finishes everything, frees included, before it returns: with the pool's
// thread, the last frees of an input could land while libFuzzer counts the input's mallocs and
// frees, and its leak check reported memory that thread was about to free (CI, fuzz_response).
// Timers run at once: the targets allow one attempt, so no retry waits.
#pragma once

#include <memory>
#include <utility>

#include "clef/async_transport.hpp"
#include "clef/transport.hpp"

namespace clef::fuzz {

class InlineTransport final : public AsyncTransport {
 public:
  explicit InlineTransport(std::shared_ptr<Transport> blocking) : m_blocking(std::move(blocking)) {}
  void start(HttpRequest request, ResponseHandler done) override {
    done(m_blocking->send(request));
  }
  void after(std::chrono::milliseconds, std::function<void(bool)> task) override { task(false); }

 private:
  std::shared_ptr<Transport> m_blocking;
};

}  // namespace clef::fuzz
