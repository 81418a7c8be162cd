// clef: the client — one API for Ollama, Cloudflare Workers AI and other System One servers.
// What it can be told is in <clef/options.hpp>; the backends in <clef/backend.hpp>.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "clef/cancel.hpp"
#include "clef/decision.hpp"
#include "clef/export.hpp"
#include "clef/options.hpp"
#include "clef/request.hpp"
#include "clef/result.hpp"
#include "clef/transport.hpp"

namespace clef {

namespace detail {
struct Submission;
class BatchRun;
}  // namespace detail

/// A System One client. Cheap to share across threads; decide() may be called concurrently.
///
///     auto client = clef::Client::create(clef::ClientOptions::from_environment(clef::Backend::ollama));
///     if (!client) return 1;  // client.error().to_string() says why
///     clef::DecisionRequest request;
///     request.state = clef::State::text("I was charged twice.");
///     request.questions = {clef::Question::yes_no("refund", "Does the customer want money back?")};
///     clef::Result<clef::Decision> decision = client->decide(request);
class CLEF_API Client {
 public:
  /// Checks the options (URL, credentials) and builds the client.
  static Result<Client> create(ClientOptions options);

  /// Validates, serializes and sends `request`, retrying as the policy allows, and parses and
  /// validates the answers. Called where it would wait for ever — from one of this client's own
  /// callbacks, or on the thread that turns its driven loop (make_driven_curl_loop), which
  /// would never turn it again — it returns invalid_input at once instead.
  Result<Decision> decide(const DecisionRequest& request) const;
  /// decide() with `retry` instead of the options' retry policy.
  Result<Decision> decide(const DecisionRequest& request, const RetryPolicy& retry) const;

  /// Starts `request` and returns at once. `done` runs exactly once, on a loop thread of the
  /// client's AsyncTransport (async_transport.hpp: what it may and may not do there), with the
  /// decision or the error — after the same checks, retries and validation as decide(), the
  /// waits between attempts being timers, not sleeping threads. `cancel` (which must outlive
  /// the call; default ClientOptions::cancel) ends it with ErrorKind::cancelled, in flight or
  /// between attempts, within 50 ms (a flag is looked at, not heard: a signal handler can set
  /// it; a CancelToken, below, is heard at once). Requests still running when the last Client
  /// copy goes are completed all the same.
  ///
  ///     client.submit(request, [](clef::Result<clef::Decision> decision) {
  ///       if (decision) std::cout << decision->answers[0].winner() << "\n";
  ///     });
  void submit(DecisionRequest request, std::function<void(Result<Decision>)> done,
              const std::atomic<bool>* cancel = nullptr) const;
  /// submit() with `retry` instead of the options' retry policy.
  void submit(DecisionRequest request, const RetryPolicy& retry,
              std::function<void(Result<Decision>)> done,
              const std::atomic<bool>* cancel = nullptr) const;
  /// submit() ended by a CancelToken (cancel.hpp): once it is cancelled, `done` runs within
  /// milliseconds with ErrorKind::cancelled, whether the request was queued, connecting, sending,
  /// waiting for the answer or waiting between attempts; its transfer is stopped and its timer
  /// let go. One token may end many requests.
  ///
  ///     clef::CancelSource stop;
  ///     client.submit(request, [](clef::Result<clef::Decision>) { /* … */ }, stop.token());
  ///     stop.cancel();  // any thread
  void submit(DecisionRequest request, std::function<void(Result<Decision>)> done,
              CancelToken cancel) const;
  /// The same with `retry` instead of the options' retry policy.
  void submit(DecisionRequest request, const RetryPolicy& retry,
              std::function<void(Result<Decision>)> done, CancelToken cancel) const;
  /// submit() with a future: for code that waits somewhere else. `cancel` as above (a token
  /// that cannot be cancelled: ClientOptions::cancel).
  ///
  ///     std::future<clef::Result<clef::Decision>> pending = client.decide_async(request);
  ///     clef::Result<clef::Decision> decision = pending.get();
  std::future<Result<Decision>> decide_async(DecisionRequest request,
                                             CancelToken cancel = {}) const;

  /// The exact request body decide() would send (validation included), for --dry-run.
  Result<std::string> request_body(const DecisionRequest& request) const;

  /// What `decision` costs when it is sent: its own Decision::cost, but for a cache hit (which
  /// spent nothing now) what it cost when it was sent (Cost::sent_usd), else its tokens at this
  /// client's price for the model; unknown when neither is known. For estimates and comparisons,
  /// where a warm cache must not read as free.
  Cost cost_if_sent(const Decision& decision) const;
  /// The URL decide() posts to (no secrets are ever part of it).
  std::string endpoint(const DecisionRequest& request) const;
  /// The headers decide() sends, the Authorization value replaced by "Bearer <redacted>" (or
  /// "Basic <redacted>" for credentials given in the base URL), and AI Gateway's
  /// cf-aig-authorization by "Bearer <redacted>".
  Headers redacted_headers() const;
  /// The same for `request`, with what its content adds (TypeSafe-Danger-Zone-Images: true for
  /// an image or a box question in TypeSafe's form).
  Headers redacted_headers(const DecisionRequest& request) const;

  const ClientOptions& options() const noexcept;

 private:
  friend struct detail::Submission;
  friend class detail::BatchRun;  // sends the request it keeps for a resend, without a copy
  struct Impl;
  /// True on a thread whose waiting for this client's answers would wait for ever: inside one of
  /// its transport's handlers, or the owner of a driven loop (AsyncTransport::running_here).
  bool waits_for_itself() const;
  void start_submission(std::shared_ptr<const DecisionRequest> request, const RetryPolicy& retry,
                        std::function<void(Result<Decision>)> done, const std::atomic<bool>* flag,
                        CancelToken token) const;
  /// start_submission() with no flag, its result delivered to a future.
  std::future<Result<Decision>> promised(DecisionRequest request, const RetryPolicy& retry,
                                         CancelToken cancel) const;
  explicit Client(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> m_impl;
};

}  // namespace clef
