// The implementation of clef/client.hpp: the client — one API for Ollama, Cloudflare Workers AI and
// other System One servers.
#include "clef/client.hpp"

#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "engine/retry.hpp"
#include "transport/timer_queue.hpp"
#include "util/redact.hpp"
#include "wire/cost.hpp"
#include "wire/http_errors.hpp"
#include "wire/model_match.hpp"
#include "wire/options_check.hpp"
#include "wire/typesafe_assets.hpp"
#include "wire/wire_request.hpp"
#include "wire/wire_response.hpp"

namespace clef {

struct Client::Impl : detail::Connection {
  mutable std::mutex random_mutex;
  mutable std::mt19937_64 random{std::random_device{}()};
  /// submit()'s transport: options.async_transport, else made on the first submit (a curl
  /// loop, or options.transport on a pool), so a blocking-only user starts no thread.
  mutable std::once_flag async_made;
  mutable std::shared_ptr<AsyncTransport> async;
  /// The question set of the last request, validated and written once for those that repeat it.
  detail::QuestionMemo question_memo;

  const std::shared_ptr<AsyncTransport>& async_transport() const {
    std::call_once(async_made, [this] {
      if (options.async_transport)
        async = options.async_transport;
      else if (options.transport)
        async = make_async_transport(options.transport);
      else
        async = make_curl_loop();
    });
    return async;
  }

  /// The HTTP request for `request`'s body, with the options' timeouts, caps, CA and proxy.
  HttpRequest http_request(std::string url, std::string body,
                           const DecisionRequest& request) const {
    HttpRequest http;
    http.url = std::move(url);
    http.headers = headers(request);
    http.body = std::move(body);
    detail::apply_transfer_options(options, http);
    return http;
  }

  /// After a failed attempt: how long to wait before the next, or nullopt when there is none
  /// (then `error` says why: past the cap, out of attempts, past the budget).
  std::optional<std::chrono::milliseconds> next_wait(Error& error, int attempt,
                                                     std::chrono::steady_clock::time_point started,
                                                     const RetryPolicy& policy) const {
    if (error.retryable() && error.retry_after && *error.retry_after > policy.max_retry_after) {
      // Never a silent hour: a wait past the cap is the caller's decision, not ours.
      // Retry-After is read saturated at a day: a value at the cap was a day or more.
      const std::string asked = *error.retry_after >= detail::max_retry_after_value
                                    ? std::string("a day or more")
                                    : std::to_string(error.retry_after->count()) + " ms";
      error.message += " (the server asked to wait " + asked + ", more than the " +
                       std::to_string(policy.max_retry_after.count()) + " ms clef waits)";
      return std::nullopt;
    }
    if (!error.retryable() || attempt >= policy.max_attempts ||
        (!policy.retry_throttling && detail::is_throttling(error))) {
      if (attempt > 1) error.message += " (after " + std::to_string(attempt) + " attempts)";
      return std::nullopt;
    }
    std::chrono::milliseconds delay;
    {
      std::lock_guard<std::mutex> lock(random_mutex);
      delay = detail::backoff_delay(policy, attempt, error.retry_after, random);
    }
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    if (elapsed + delay > policy.total_budget) {
      error.message += " (after " + std::to_string(attempt) +
                       (attempt == 1 ? " attempt" : " attempts") +
                       "; the next wait would pass the retry budget)";
      return std::nullopt;
    }
    return delay;
  }

  const std::string& model(const DecisionRequest& request) const {
    return request.model.empty() ? options.model : request.model;
  }

  /// The model as the body names it (bare for Workers AI).
  Result<std::string> body_model(const DecisionRequest& request) const {
    return detail::body_model_name(options.backend, model(request));
  }

  Headers headers() const {
    Headers headers = {{"Content-Type", "application/json"},
                       {"Accept", "application/json"},
                       {"User-Agent", detail::user_agent()}};
    if (!authorization.empty()) headers.emplace_back("Authorization", authorization);
    headers.insert(headers.end(), gateway_headers.begin(), gateway_headers.end());
    return headers;
  }

  /// headers(), and what this request's content asks for (TypeSafe's opt-in for images).
  Headers headers(const DecisionRequest& request) const {
    Headers all = headers();
    if (auto name = body_model(request)) {
      detail::add_typesafe_headers(all, request, options.backend, name.value());
    }
    return all;
  }

  Result<Decision> interpret(const HttpResponse& response, const HttpRequest& http,
                             const DecisionRequest& request) const {
    if (response.status < 200 || response.status > 299) {
      return detail::error_from_response(options.backend, response, model(request), secret,
                                         http.url);
    }
    auto decision = detail::read_decision(options.backend, response, request.questions,
                                          options.validation, secret);
    if (!decision) return decision.error();
    detail::redact_decision(decision.value(), secret);
    detail::settle_cost(decision.value(), options.backend, response, model(request),
                        options.prices);
    if (options.validation.require_asked_model) {
      detail::mark_other_model(decision.value(), model(request),
                               traits_of(options.backend).tagged_models);
    }
    return decision;
  }

  Result<Decision> outcome(Result<HttpResponse>&& response, const HttpRequest& http,
                           const DecisionRequest& request) const {
    if (!response) return response.error();
    auto decision = interpret(response.value(), http, request);
    if (decision) decision.value().cached = response->from_cache;
    return decision;
  }
};

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
  /// Shared, not copied: a batch keeps the same request to send again after a 429.
  std::shared_ptr<const DecisionRequest> request;
  HttpRequest http;  ///< Its cancel flag and cancel_token are the submission's.
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
  static void wait(const std::shared_ptr<Submission>& submission, std::chrono::milliseconds delay);
  static void wait_until(const std::shared_ptr<Submission>& submission,
                         std::chrono::steady_clock::time_point until);
};

void Submission::settle(Result<Decision> result) {
  if (settled.exchange(true)) return;
  http.cancel_token.forget(registration.load());
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
  if (!submission->http.cancel_token.can_be_cancelled()) return;
  std::weak_ptr<Submission> weak = submission;
  submission->registration = submission->http.cancel_token.on_cancel([weak] {
    auto alive = weak.lock();
    if (!alive || alive->settled.load()) return;
    // Weakly too: settled meanwhile on the loop (its transfer ended by the same cancel), the
    // submission is let go, and this task, on a loop nobody turns again, must not keep it (and
    // through it the client and the loop) alive.
    alive->transport->after(std::chrono::milliseconds(0), [weak](bool) {
      if (auto pending = weak.lock())
        pending->settle(
            make_error(ErrorKind::cancelled, "cancelled by the caller", pending->http.url));
    });
  });
}

void Submission::send_attempt(const std::shared_ptr<Submission>& submission) {
  if (submission->settled.load()) return;
  ++submission->attempt;
  if (submission->http.cancelled()) {
    return submission->settle(make_error(ErrorKind::cancelled, "cancelled before sending"));
  }
  auto carrier = std::make_shared<Waiting>();
  carrier->submission = submission;
  {
    std::lock_guard<std::mutex> lock(submission->waiting_mutex);
    submission->waiting = carrier;
  }
  submission->transport->start(submission->http, [carrier](Result<HttpResponse> response) {
    const auto held = carrier->take();
    if (!held) return;  // cancelled meanwhile: already delivered, and let go
    Submission& s = *held;
    if (s.settled.load()) return;
    auto result = s.impl->outcome(std::move(response), s.http, *s.request);
    if (result) {
      result.value().latency = std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - s.started);
      return s.settle(std::move(result));
    }
    Error error = result.error();
    const auto delay = s.impl->next_wait(error, s.attempt, s.started, s.policy);
    if (!delay) return s.settle(Result<Decision>(std::move(error)));
    wait(held, *delay);
  });
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
  if (submission->http.cancel) left = std::min(left, milliseconds(50));
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
    if (s->http.cancelled()) {
      return s->settle(make_error(ErrorKind::cancelled, "cancelled between attempts"));
    }
    if (steady_clock::now() < until) return wait_until(s, until);
    send_attempt(s);
  });
}

}  // namespace detail

Client::Client(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}

Result<Client> Client::create(ClientOptions options) {
  if (options.retry.max_attempts < 1) options.retry.max_attempts = 1;
  auto connection = detail::connection_from(std::move(options));
  if (!connection) return connection.error();
  auto impl = std::make_shared<Impl>();
  static_cast<detail::Connection&>(*impl) = std::move(connection).value();
  return Client(std::move(impl));
}

const ClientOptions& Client::options() const noexcept {
  return m_impl->options;
}

std::string Client::endpoint(const DecisionRequest& request) const {
  return detail::decision_url(m_impl->options, m_impl->base_url, m_impl->model(request));
}

namespace {

Headers redacted(Headers headers) {
  for (auto& [name, value] : headers) {
    // The scheme stays ("Bearer", "Basic"): it tells a reader which credential went.
    if (name == "Authorization" || name == "cf-aig-authorization") {
      value = value.substr(0, value.find(' ')) + " <redacted>";
    }
  }
  return headers;
}

}  // namespace

Headers Client::redacted_headers() const {
  return redacted(m_impl->headers());
}

Headers Client::redacted_headers(const DecisionRequest& request) const {
  return redacted(m_impl->headers(request));
}

Result<std::string> Client::request_body(const DecisionRequest& request) const {
  auto model = m_impl->body_model(request);
  if (!model) return model.error();
  auto questions = m_impl->question_memo.prepare(request.questions);
  if (!questions) return questions.error();
  return detail::serialize_request(request, m_impl->options.backend, model.value(),
                                   *questions.value());
}

Cost Client::cost_if_sent(const Decision& decision) const {
  if (decision.cost.source != CostSource::cached) return decision.cost;
  if (decision.cost.sent_usd)
    return Cost{decision.cost.sent_usd, CostSource::computed, std::nullopt, std::nullopt};
  if (decision.usage.input_tokens <= 0) return Cost{};  // no tokens: nothing to price
  const ClientOptions& options = m_impl->options;
  return detail::token_cost(decision, options.backend,
                            decision.model.empty() ? options.model : decision.model,
                            options.prices);
}

bool Client::waits_for_itself() const {
  return m_impl->async_transport()->running_here();
}

Result<Decision> Client::decide(const DecisionRequest& request) const {
  return decide(request, m_impl->options.retry);
}

Result<Decision> Client::decide(const DecisionRequest& request, const RetryPolicy& policy) const {
  // On the loop's own thread the wait below would wait for itself: refused, not a hang.
  if (waits_for_itself()) {
    return make_error(ErrorKind::invalid_input,
                      "decide() was called where it would wait for itself for ever (in one of "
                      "this client's own callbacks, or on the thread that turns its loop): call "
                      "submit() there",
                      "decide");
  }
  // The one pipeline: the same stages, retries and timers as submit(), waited for here.
  return promised(request, policy, {}).get();
}

void Client::submit(DecisionRequest request, std::function<void(Result<Decision>)> done,
                    const std::atomic<bool>* cancel) const {
  submit(std::move(request), m_impl->options.retry, std::move(done), cancel);
}

void Client::submit(DecisionRequest request, const RetryPolicy& retry,
                    std::function<void(Result<Decision>)> done,
                    const std::atomic<bool>* cancel) const {
  start_submission(std::make_shared<const DecisionRequest>(std::move(request)), retry,
                   std::move(done), cancel, {});
}

void Client::submit(DecisionRequest request, std::function<void(Result<Decision>)> done,
                    CancelToken cancel) const {
  submit(std::move(request), m_impl->options.retry, std::move(done), std::move(cancel));
}

void Client::submit(DecisionRequest request, const RetryPolicy& retry,
                    std::function<void(Result<Decision>)> done, CancelToken cancel) const {
  start_submission(std::make_shared<const DecisionRequest>(std::move(request)), retry,
                   std::move(done), nullptr, std::move(cancel));
}

void Client::start_submission(std::shared_ptr<const DecisionRequest> request,
                              const RetryPolicy& retry, std::function<void(Result<Decision>)> done,
                              const std::atomic<bool>* flag, CancelToken token) const {
  auto body = request_body(*request);
  if (!body) {
    // Refused before anything was sent: still reported through `done`, once.
    auto transport = m_impl->async_transport();
    auto error = std::make_shared<Error>(body.error());
    transport->after(std::chrono::milliseconds(0), [done = std::move(done), error](bool) mutable {
      detail::call_handler(done, Result<Decision>(std::move(*error)));
    });
    return;
  }
  auto submission = std::make_shared<detail::Submission>();
  submission->impl = m_impl;
  submission->transport = m_impl->async_transport();
  submission->http = m_impl->http_request(endpoint(*request), std::move(body).value(), *request);
  if (flag) submission->http.cancel = flag;
  submission->http.cancel_token = std::move(token);
  submission->request = std::move(request);
  submission->policy = retry;
  if (submission->policy.max_attempts < 1) submission->policy.max_attempts = 1;
  submission->done = std::move(done);
  detail::Submission::watch_token(submission);
  detail::Submission::send_attempt(submission);
}

std::future<Result<Decision>> Client::decide_async(DecisionRequest request,
                                                   CancelToken cancel) const {
  return promised(std::move(request), m_impl->options.retry, std::move(cancel));
}

std::future<Result<Decision>> Client::promised(DecisionRequest request, const RetryPolicy& retry,
                                               CancelToken cancel) const {
  // The promise is shared: the loop thread may still be inside set_value() when the future's
  // owner has its result and goes.
  auto promise = std::make_shared<std::promise<Result<Decision>>>();
  auto future = promise->get_future();
  start_submission(
      std::make_shared<const DecisionRequest>(std::move(request)), retry,
      [promise](Result<Decision> result) { promise->set_value(std::move(result)); }, nullptr,
      std::move(cancel));
  return future;
}

}  // namespace clef
