// Internal: one submitted decision between its attempts (Client::submit, decide, decide_async
// and the batch engine all make one): sent, waited for, retried on a timer, cancelled, and
// settled exactly once.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "engine/client_impl.hpp"

namespace clef {

namespace detail {

/// Holds a submission for the timer it waits on between attempts, or for the transfer it has in
/// flight, and lets go of it when the submission is settled meanwhile (cancelled): what the timer
/// or the transfer keeps then is this empty holder, not the submission. A transfer kept the
/// submission itself once: cancelled on a loop an application turns, and settled before the
/// loop's next turn ended the transfer, the submission held the client, the client the loop, and
/// the loop the transfer — a cycle, leaked when the application dropped the loop unturned.
struct Waiting {
  std::mutex mutex;
  std::shared_ptr<Submission> submission;
  std::shared_ptr<Submission> take() {
    std::lock_guard<std::mutex> lock(mutex);
    return std::move(submission);
  }
};

/// One submitted decision between its attempts: everything the next one needs, kept alive by
/// the handler or timer that carries it. Its result is delivered once, by settle(), whichever
/// comes first: the answer, the last error, or the cancellation.
struct Submission {
  std::shared_ptr<const Client::Impl> impl;
  std::shared_ptr<AsyncTransport> transport;
  detail::SharedRequestTransport* shared_transport = nullptr;  ///< transport's shared_form.
  /// Shared, not copied: a batch keeps the same request to send again after a 429.
  std::shared_ptr<const DecisionRequest> request;
  /// Its cancel flag and cancel_token are the submission's. Shared with the transport while in
  /// flight (shared_request.hpp), never changed after it is made.
  std::shared_ptr<HttpRequest> http;
  RetryPolicy policy;
  std::function<void(Result<Decision>)> done;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  int attempt = 0;
  std::atomic<bool> settled{false};
  std::atomic<std::uint64_t> registration{0};  ///< On http.cancel_token.
  std::mutex waiting_mutex;
  std::weak_ptr<Waiting> waiting;  ///< The holder its timer or its transfer keeps.

  /// Delivers `result` unless something was delivered already; a timer still due lets go of
  /// this submission (the caller holds it until this returns).
  void settle(Result<Decision> result);

  static void watch_token(const std::shared_ptr<Submission>& submission);
  static void send_attempt(const std::shared_ptr<Submission>& submission);
  /// What an attempt's response makes of the submission `carrier` holds: settled, or tried again.
  static void answered(Waiting& carrier, Result<HttpResponse>&& response);
  static void wait(const std::shared_ptr<Submission>& submission, std::chrono::milliseconds delay);
  static void wait_until(const std::shared_ptr<Submission>& submission,
                         std::chrono::steady_clock::time_point until);
};
}  // namespace detail
}  // namespace clef
