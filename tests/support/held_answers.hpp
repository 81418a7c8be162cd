// A test server that holds its answers: decision requests after the first few wait at the
// server until the test releases them. A test that must act while a run is under way (signal
// it, read its files) then finds it under way however slow the machine is, where a fixed
// latency gives it a window that a busy CI machine can miss (a child's fsync alone has taken
// longer than a whole 1.5 s run there).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "clef/mock.hpp"

namespace clef::testing {

class HeldAnswers {
 public:
  /// From now on, `server`'s decision requests after the first `let_through` wait until
  /// release() (60 s at most, so a test that fails early cannot hang its server). Replaces the
  /// server's script.
  HeldAnswers(clef::MockServer& server, int let_through) : m_state(std::make_shared<State>()) {
    server.set_script([state = m_state, let_through](const clef::MockRequest& request,
                                                     int) -> std::optional<clef::MockReply> {
      if (request.path != "/v1/systemone" || state->decisions++ < let_through) return std::nullopt;
      ++state->waiting;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!state->released && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      --state->waiting;
      return std::nullopt;  // answered as the server would have
    });
  }
  HeldAnswers(const HeldAnswers&) = delete;
  HeldAnswers& operator=(const HeldAnswers&) = delete;
  ~HeldAnswers() { release(); }

  /// Every request held, and every one after, goes on to its answer.
  void release() { m_state->released = true; }
  /// Requests waiting at the server now.
  int waiting() const { return m_state->waiting; }

 private:
  struct State {
    std::atomic<bool> released{false};
    std::atomic<int> decisions{0};
    std::atomic<int> waiting{0};
  };
  std::shared_ptr<State> m_state;  ///< Shared with the script, which may outlive this object.
};

}  // namespace clef::testing
