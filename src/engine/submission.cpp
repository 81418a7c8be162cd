// The implementation of submission.hpp.
#include "engine/submission.hpp"

#include "transport/timer_queue.hpp"

namespace clef::detail {

void Submission::settle(Result<Decision> result) {
  if (settled.exchange(true)) return;
  http->cancel_token.forget(registration.load());
  std::shared_ptr<Waiting> holder;
  {
    std::lock_guard<std::mutex> lock(waiting_mutex);
    holder = waiting.lock();
  }
  if (holder) holder->take();
  detail::call_handler(done, std::move(result));
}

/// A cancelled token settles the submission at once, on a loop thread (where `done` always runs),
/// whatever it was doing: queued, in flight (the loop ends the transfer too), or waiting out a
/// backoff. The callback holds the submission weakly: it runs on the canceller's thread.
void Submission::watch_token(const std::shared_ptr<Submission>& submission) {
  if (!submission->http->cancel_token.can_be_cancelled()) return;
  std::weak_ptr<Submission> weak = submission;
  submission->registration = submission->http->cancel_token.on_cancel([weak] {
    auto alive = weak.lock();
    if (!alive || alive->settled.load()) return;
    // Weakly too: settled meanwhile on the loop (its transfer ended by the same cancel), the
    // submission is let go, and this task, on a loop nobody turns again, must not keep it (and
    // through it the client and the loop) alive.
    alive->transport->after(std::chrono::milliseconds(0), [weak](bool) {
      if (auto pending = weak.lock())
        pending->settle(
            make_error(ErrorKind::cancelled, "cancelled by the caller", pending->http->url));
    });
  });
}

void Submission::send_attempt(const std::shared_ptr<Submission>& submission) {
  if (submission->settled.load()) return;
  ++submission->attempt;
  if (submission->http->cancelled()) {
    return submission->settle(make_error(ErrorKind::cancelled, "cancelled before sending"));
  }
  auto carrier = std::make_shared<Waiting>();
  carrier->submission = submission;
  {
    std::lock_guard<std::mutex> lock(submission->waiting_mutex);
    submission->waiting = carrier;
  }
  // A handler that judges (answer_verdict.hpp): outcome() gives its verdict on the response.
  JudgingHandler on_response{carrier, [](void* state, Result<HttpResponse>&& response) {
                               answered(*static_cast<Waiting*>(state), std::move(response));
                             }};
  detail::start_shared_on(*submission->transport, submission->shared_transport, submission->http,
                          std::move(on_response));
}

void Submission::answered(Waiting& carrier, Result<HttpResponse>&& response) {
  const auto held = carrier.take();
  if (!held) return;  // cancelled meanwhile: already delivered, and let go
  Submission& s = *held;
  if (s.settled.load()) return;
  auto result = s.impl->outcome(std::move(response), *s.http, *s.request);
  if (result) {
    result.value().latency = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - s.started);
    return s.settle(std::move(result));
  }
  Error error = result.error();
  const auto delay = s.impl->next_wait(error, s.attempt, s.started, s.policy);
  if (!delay) return s.settle(Result<Decision>(std::move(error)));
  wait(held, *delay);
}

/// Waits `delay` between attempts, then sends again.
void Submission::wait(const std::shared_ptr<Submission>& submission,
                      std::chrono::milliseconds delay) {
  if (submission->impl->options.sleep) {
    // A test's clock: told the wait instead of a timer running it.
    submission->impl->options.sleep(delay);
    return send_attempt(submission);
  }
  wait_until(submission, std::chrono::steady_clock::now() + delay);
}

/// Waits until `until` on a timer. A CancelToken ends the wait through watch_token; the flag
/// (ClientOptions::cancel, which cannot call back) is looked at every 50 ms.
void Submission::wait_until(const std::shared_ptr<Submission>& submission,
                            std::chrono::steady_clock::time_point until) {
  using namespace std::chrono;
  auto left = duration_cast<milliseconds>(until - steady_clock::now());
  if (left < milliseconds(0)) left = milliseconds(0);
  if (submission->http->cancel) left = std::min(left, milliseconds(50));
  auto holder = std::make_shared<Waiting>();
  holder->submission = submission;
  {
    std::lock_guard<std::mutex> lock(submission->waiting_mutex);
    submission->waiting = holder;
  }
  submission->transport->after(left, [holder, until](bool shutting_down) {
    auto s = holder->take();
    if (!s || s->settled.load()) return;
    if (shutting_down) {
      return s->settle(
          make_error(ErrorKind::cancelled, "the transport shut down while a retry was waiting"));
    }
    if (s->http->cancelled()) {
      return s->settle(make_error(ErrorKind::cancelled, "cancelled between attempts"));
    }
    if (steady_clock::now() < until) return wait_until(s, until);
    send_attempt(s);
  });
}

}  // namespace clef::detail
