// clef: cancellation as an object — a source that cancels and the tokens that are told, in the
// manner of C++20's std::stop_source and std::stop_token, for C++17.
//
//     clef::CancelSource cancel;
//     client.submit(request, [](clef::Result<clef::Decision>) { /* … */ }, cancel.token());
//     cancel.cancel();  // from any thread: the request ends with ErrorKind::cancelled
//
// One token may be given to many requests (a whole batch, say); cancel() ends every one of them,
// whatever it is doing: queued, connecting, sending, waiting for the answer or waiting between
// attempts. A cancelled token stays cancelled.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "clef/export.hpp"

namespace clef {

namespace detail {
struct CancelState;
}

/// What a request is given to learn that it should end. Cheap to copy; copies share one state. A
/// default-constructed token is never cancelled.
class CLEF_API CancelToken {
 public:
  CancelToken() = default;

  /// True once the source's cancel() has been called.
  bool cancelled() const noexcept;
  /// False for a default-constructed token, which nothing can cancel.
  bool can_be_cancelled() const noexcept { return m_state != nullptr; }

  /// Registers `callback` to run once cancel() is called — on the thread that calls it, or at once
  /// on this thread when the token is already cancelled — and returns what forget() takes (0 for
  /// a token that cannot be cancelled, or when the callback ran at once). A callback must be
  /// short and must not block: cancel() runs every callback before it returns.
  std::uint64_t on_cancel(std::function<void()> callback) const;
  /// Unregisters what on_cancel returned (0 does nothing): once this returns the callback is not
  /// running and never will, as with std::stop_callback's destructor — it waits for a callback
  /// running on another thread, so do not call it holding a lock that callback takes.
  void forget(std::uint64_t registration) const noexcept;

 private:
  friend class CancelSource;
  explicit CancelToken(std::shared_ptr<detail::CancelState> state) : m_state(std::move(state)) {}
  std::shared_ptr<detail::CancelState> m_state;
};

/// Cancels: the tokens it hands out (and requests given them) learn it at once.
class CLEF_API CancelSource {
 public:
  CancelSource();

  /// Cancels every token of this source and runs their callbacks, once; later calls do nothing.
  /// Safe from any thread, a loop's handler included. Not async-signal-safe: a signal handler
  /// sets a std::atomic<bool> instead (ClientOptions::cancel), which clef looks at every 50 ms.
  void cancel() noexcept;
  bool cancelled() const noexcept;
  CancelToken token() const { return CancelToken(m_state); }

 private:
  std::shared_ptr<detail::CancelState> m_state;
};

}  // namespace clef
