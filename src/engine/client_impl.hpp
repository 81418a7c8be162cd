// Internal: what a Client holds — its checked options and connection, its transports, the
// headers and question set it writes once — and what it does with one exchange: the request
// built, the response read into a decision, the wait before another attempt.
#pragma once

#include <mutex>
#include <optional>
#include <random>

#include "clef/async_transport.hpp"
#include "clef/client.hpp"
#include "engine/retry.hpp"
#include "store/answer_verdict.hpp"
#include "transport/shared_request.hpp"
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
  mutable detail::SharedRequestTransport* async_shared = nullptr;  ///< async's shared_form.
  /// The headers of every request (headers()), and the URL of one for the options' model,
  /// written once.
  Headers standing_headers;
  std::string default_endpoint;
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
      async_shared = detail::shared_form(async.get());
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

  Headers headers() const { return standing_headers; }

  Headers headers_of_every_request() const {
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
    // Before anything else is done with it: a stage it passed (the cache) acts on the verdict.
    detail::judge_answer(
        {response.value(), decision && decision->all_ok(), options.backend, options.validation});
    if (decision) decision.value().cached = response->from_cache;
    return decision;
  }
};

}  // namespace clef
