// The implementation of clef/client.hpp: the client — one API for Ollama, Cloudflare Workers AI and
// other System One servers.
#include "clef/client.hpp"

#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/client_impl.hpp"
#include "engine/submission.hpp"
#include "transport/timer_queue.hpp"
#include "util/redact.hpp"

namespace clef {

Client::Client(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}

Result<Client> Client::create(ClientOptions options) {
  if (options.retry.max_attempts < 1) options.retry.max_attempts = 1;
  auto connection = detail::connection_from(std::move(options));
  if (!connection) return connection.error();
  auto impl = std::make_shared<Impl>();
  static_cast<detail::Connection&>(*impl) = std::move(connection).value();
  impl->standing_headers = impl->headers_of_every_request();
  impl->default_endpoint = detail::decision_url(impl->options, impl->base_url, impl->options.model);
  return Client(std::move(impl));
}

const ClientOptions& Client::options() const noexcept {
  return m_impl->options;
}

std::string Client::endpoint(const DecisionRequest& request) const {
  if (request.model.empty()) return m_impl->default_endpoint;
  return detail::decision_url(m_impl->options, m_impl->base_url, request.model);
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
  submission->shared_transport = m_impl->async_shared;
  submission->http = std::make_shared<HttpRequest>(
      m_impl->http_request(endpoint(*request), std::move(body).value(), *request));
  if (flag) submission->http->cancel = flag;
  submission->http->cancel_token = std::move(token);
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
