#include "clef/client.hpp"

#include <mutex>
#include <random>
#include <thread>

#include "http_errors.hpp"
#include "options_check.hpp"
#include "redact.hpp"
#include "retry.hpp"
#include "wire_request.hpp"
#include "wire_response.hpp"
#include "workers_ai.hpp"

namespace clef {

struct Client::Impl {
  ClientOptions options;
  std::shared_ptr<Transport> transport;
  std::string base_url;
  std::string authorization;  ///< The Authorization header's value, or empty.
  std::string secret;         ///< Scrubbed from everything the server says.
  mutable std::mutex random_mutex;
  mutable std::mt19937_64 random{std::random_device{}()};

  const std::string& model(const DecisionRequest& request) const {
    return request.model.empty() ? options.model : request.model;
  }

  /// The model as the body names it (bare for Workers AI).
  Result<std::string> body_model(const DecisionRequest& request) const {
    if (options.backend != Backend::workers_ai) return model(request);
    auto names = detail::workers_model(model(request));
    if (!names) return names.error();
    return std::move(names->body);
  }

  Headers headers() const {
    Headers headers = {{"Content-Type", "application/json"},
                       {"Accept", "application/json"},
                       {"User-Agent", detail::user_agent()}};
    if (!authorization.empty()) headers.emplace_back("Authorization", authorization);
    return headers;
  }

  bool cancelled() const { return options.cancel && options.cancel->load(); }

  void wait(std::chrono::milliseconds delay) const {
    if (options.sleep) return options.sleep(delay);
    // Sleep in slices so a cancellation is noticed promptly.
    const auto until = std::chrono::steady_clock::now() + delay;
    while (!cancelled() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
          std::chrono::milliseconds(20), std::chrono::duration_cast<std::chrono::milliseconds>(
                                             until - std::chrono::steady_clock::now())));
    }
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
    return decision;
  }

  Result<Decision> attempt(const HttpRequest& http, const DecisionRequest& request) const {
    auto response = transport->send(http);
    if (!response) return response.error();
    auto decision = interpret(response.value(), http, request);
    if (decision) decision.value().cached = response->from_cache;
    return decision;
  }
};

Client::Client(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}

Result<Client> Client::create(ClientOptions options) {
  auto base = detail::checked_api_root(options);
  if (!base) return base.error();
  if (options.retry.max_attempts < 1) options.retry.max_attempts = 1;
  auto impl = std::make_shared<Impl>();
  impl->transport = options.transport ? options.transport : make_curl_transport();
  impl->base_url = std::move(base->url);
  impl->authorization = std::move(base->authorization);
  impl->secret = std::move(base->secret);
  impl->options = std::move(options);
  return Client(std::move(impl));
}

const ClientOptions& Client::options() const noexcept {
  return m_impl->options;
}

std::string Client::endpoint(const DecisionRequest& request) const {
  if (m_impl->options.backend != Backend::workers_ai) return m_impl->base_url + "/v1/systemone";
  // A model request_body() refuses never reaches the wire; its URL is still shown as asked.
  auto names = detail::workers_model(m_impl->model(request));
  return m_impl->base_url + "/accounts/" + m_impl->options.account_id + "/ai/run/" +
         (names ? names->path : m_impl->model(request));
}

Headers Client::redacted_headers() const {
  Headers headers = m_impl->headers();
  for (auto& [name, value] : headers) {
    // The scheme stays ("Bearer", "Basic"): it tells a reader which credential went.
    if (name == "Authorization") value = value.substr(0, value.find(' ')) + " <redacted>";
  }
  return headers;
}

Result<std::string> Client::request_body(const DecisionRequest& request) const {
  auto model = m_impl->body_model(request);
  if (!model) return model.error();
  return detail::serialize_request(request, m_impl->options.backend, model.value());
}

Result<Decision> Client::decide(const DecisionRequest& request) const {
  return decide(request, m_impl->options.retry);
}

Result<Decision> Client::decide(const DecisionRequest& request, const RetryPolicy& policy) const {
  const Impl& impl = *m_impl;
  auto body = request_body(request);
  if (!body) return body.error();

  HttpRequest http;
  http.url = endpoint(request);
  http.headers = impl.headers();
  http.body = std::move(body).value();
  http.connect_timeout = impl.options.connect_timeout;
  http.total_timeout = impl.options.request_timeout;
  http.max_response_bytes = impl.options.max_response_bytes;
  http.cancel = impl.options.cancel;
  http.ca_file = impl.options.ca_file;
  http.proxy = impl.options.proxy;

  const auto started = std::chrono::steady_clock::now();
  for (int attempt = 1;; ++attempt) {
    if (impl.cancelled()) return make_error(ErrorKind::cancelled, "cancelled before sending");
    auto result = impl.attempt(http, request);
    if (result) {
      result.value().latency = std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - started);
      return result;
    }
    Error error = result.error();
    if (error.retryable() && error.retry_after && *error.retry_after > policy.max_retry_after) {
      // Never a silent hour: a wait past the cap is the caller's decision, not ours.
      // Retry-After is read saturated at a day: a value at the cap was a day or more.
      const std::string asked = *error.retry_after >= detail::max_retry_after_value
                                    ? std::string("a day or more")
                                    : std::to_string(error.retry_after->count()) + " ms";
      error.message += " (the server asked to wait " + asked + ", more than the " +
                       std::to_string(policy.max_retry_after.count()) + " ms clef waits)";
      return error;
    }
    if (!error.retryable() || attempt >= policy.max_attempts ||
        (!policy.retry_throttling && detail::is_throttling(error))) {
      if (attempt > 1) error.message += " (after " + std::to_string(attempt) + " attempts)";
      return error;
    }
    std::chrono::milliseconds delay;
    {
      std::lock_guard<std::mutex> lock(impl.random_mutex);
      delay = detail::backoff_delay(policy, attempt, error.retry_after, impl.random);
    }
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    if (elapsed + delay > policy.total_budget) {
      error.message += " (after " + std::to_string(attempt) +
                       (attempt == 1 ? " attempt" : " attempts") +
                       "; the next wait would pass the retry budget)";
      return error;
    }
    impl.wait(delay);
  }
}

}  // namespace clef
