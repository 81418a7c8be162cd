#include "clef/client.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include "clef/version.hpp"
#include "http_errors.hpp"
#include "redact.hpp"
#include "retry.hpp"
#include "wire_request.hpp"
#include "wire_response.hpp"

namespace clef {
namespace {

constexpr const char* workers_default_base = "https://api.cloudflare.com/client/v4";

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool has_control_characters(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool is_alphanumeric(const std::string& text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      return false;
    }
  }
  return !text.empty();
}

/// Workers AI names a model "@cf/cloudflare/clef-flash" in the URL and "clef-flash" in the body.
std::string workers_path_model(const std::string& model) {
  return model.rfind('@', 0) == 0 ? model : "@cf/cloudflare/" + model;
}

std::string workers_body_model(const std::string& model) {
  const auto slash = model.rfind('/');
  return slash == std::string::npos ? model : model.substr(slash + 1);
}

/// Timeouts outside [1 ms, 1 day] are refused: 0 would mean "no timeout" to libcurl, and
/// larger values overflow its long on some platforms.
Status check_timeout(std::chrono::milliseconds value, const char* field) {
  if (value >= std::chrono::milliseconds(1) && value <= std::chrono::hours(24)) return {};
  return make_error(ErrorKind::invalid_input,
                    std::string(field) + " must be between 1 ms and 1 day, not " +
                        std::to_string(value.count()) + " ms",
                    field);
}

std::string first_set(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    std::string value = env(name);
    if (!value.empty()) return value;
  }
  return {};
}

}  // namespace

const char* to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::ollama:
      return "ollama";
    case Backend::workers_ai:
      return "workers-ai";
    case Backend::systemone:
      return "systemone";
  }
  return "unknown";
}

ClientOptions ClientOptions::from_environment(Backend backend) {
  ClientOptions options;
  options.backend = backend;
  // curl's own variable first, then the one Go programs (Ollama's CLI) honour.
  options.ca_file = first_set({"CURL_CA_BUNDLE", "SSL_CERT_FILE"});
  switch (backend) {
    case Backend::ollama:
      options.base_url = ollama_base_url(env("OLLAMA_HOST"));
      break;
    case Backend::workers_ai:
      options.account_id = env("CLOUDFLARE_ACCOUNT_ID");
      options.api_token = env("CLOUDFLARE_API_TOKEN");
      break;
    case Backend::systemone:
      options.api_token = env("CLEF_API_KEY");
      break;
  }
  return options;
}

struct Client::Impl {
  ClientOptions options;
  std::shared_ptr<Transport> transport;
  std::string base_url;
  mutable std::mutex random_mutex;
  mutable std::mt19937_64 random{std::random_device{}()};

  std::string body_model(const DecisionRequest& request) const {
    const std::string& model = request.model.empty() ? options.model : request.model;
    return options.backend == Backend::workers_ai ? workers_body_model(model) : model;
  }

  Headers headers() const {
    Headers headers = {{"Content-Type", "application/json"},
                       {"Accept", "application/json"},
                       {"User-Agent", std::string("clef/") + clef::version}};
    if (!options.api_token.empty()) {
      headers.emplace_back("Authorization", "Bearer " + options.api_token);
    }
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

  /// A 2xx body clef cannot use, stamped with what the response said about itself.
  Error unusable(Error error, const HttpResponse& response) const {
    error.http_status = response.status;
    error.request_id = detail::request_id(response, options.api_token);
    return error;
  }

  Result<Decision> interpret(const HttpResponse& response, const DecisionRequest& request) const {
    const std::string& secret = options.api_token;
    if (response.status < 200 || response.status > 299) {
      return detail::error_from_response(options.backend, response, body_model(request), secret);
    }
    auto body = detail::parse_json(response.body, ErrorKind::invalid_response, "the response body");
    if (!body) return unusable(body.error(), response);
    detail::Json json = std::move(body).value();
    std::string_view text = response.body;
    if (options.backend == Backend::workers_ai) {
      const bool enveloped = json.is_object() && json.contains("success");
      auto inner = detail::unwrap_workers_envelope(std::move(json), response, secret);
      if (!inner) return inner.error();
      json = std::move(inner).value();
      if (enveloped) text = detail::member_text(text, "result").value_or(std::string_view());
    }
    auto decision = detail::parse_decision(json, text, request.questions, options.validation);
    if (!decision) return unusable(decision.error(), response);
    decision->request_id = detail::request_id(response);
    decision->raw_json = text.empty() ? detail::dump_compact(json) : std::string(text);
    detail::redact_decision(decision.value(), secret);
    return decision;
  }

  Result<Decision> attempt(const HttpRequest& http, const DecisionRequest& request) const {
    auto response = transport->send(http);
    if (!response) return response.error();
    return interpret(response.value(), request);
  }
};

Client::Client(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}

Result<Client> Client::create(ClientOptions options) {
  auto impl = std::make_shared<Impl>();
  std::string base = options.base_url;
  switch (options.backend) {
    case Backend::ollama:
      if (base.empty()) base = ollama_base_url(env("OLLAMA_HOST"));
      break;
    case Backend::workers_ai:
      if (base.empty()) base = workers_default_base;
      if (options.account_id.empty()) {
        return make_error(ErrorKind::invalid_input,
                          "Workers AI needs an account id: set CLOUDFLARE_ACCOUNT_ID",
                          "account_id");
      }
      if (!is_alphanumeric(options.account_id)) {
        return make_error(ErrorKind::invalid_input, "the account id must be letters and digits",
                          "account_id");
      }
      if (options.api_token.empty()) {
        return make_error(ErrorKind::authentication,
                          "Workers AI needs an API token: set CLOUDFLARE_API_TOKEN", "api_token");
      }
      break;
    case Backend::systemone:
      if (base.empty()) {
        return make_error(ErrorKind::invalid_input,
                          "a System One server needs a base URL (e.g. http://localhost:8000)",
                          "base_url");
      }
      break;
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0) {
    return make_error(ErrorKind::invalid_input,
                      "the base URL must start with http:// or https://: \"" + base + "\"",
                      "base_url");
  }
  if (has_control_characters(base)) {
    return make_error(ErrorKind::invalid_input, "the base URL contains control characters",
                      "base_url");
  }
  if (has_control_characters(options.api_token)) {
    return make_error(ErrorKind::invalid_input,
                      "the API token contains a line break or control character (a stray "
                      "newline from a file?)",
                      "api_token");
  }
  if (auto s = check_timeout(options.connect_timeout, "connect_timeout"); !s) return s.error();
  if (auto s = check_timeout(options.request_timeout, "request_timeout"); !s) return s.error();
  if (!options.ca_file.empty() && ::access(options.ca_file.c_str(), R_OK) != 0) {
    return make_error(ErrorKind::invalid_input,
                      "cannot read the CA bundle \"" + options.ca_file +
                          "\" (from --ca-cert, CURL_CA_BUNDLE or SSL_CERT_FILE)",
                      "ca_file");
  }
  if (options.retry.max_attempts < 1) options.retry.max_attempts = 1;
  impl->transport = options.transport ? options.transport : make_curl_transport();
  impl->base_url = std::move(base);
  impl->options = std::move(options);
  return Client(std::move(impl));
}

const ClientOptions& Client::options() const noexcept {
  return m_impl->options;
}

std::string Client::endpoint(const DecisionRequest& request) const {
  if (m_impl->options.backend != Backend::workers_ai) return m_impl->base_url + "/v1/systemone";
  const std::string& model = request.model.empty() ? m_impl->options.model : request.model;
  return m_impl->base_url + "/accounts/" + m_impl->options.account_id + "/ai/run/" +
         workers_path_model(model);
}

Headers Client::redacted_headers() const {
  Headers headers = m_impl->headers();
  for (auto& [name, value] : headers) {
    if (name == "Authorization") value = "Bearer <redacted>";
  }
  return headers;
}

Result<std::string> Client::request_body(const DecisionRequest& request) const {
  return detail::serialize_request(request, m_impl->options.backend, m_impl->body_model(request));
}

Result<Decision> Client::decide(const DecisionRequest& request) const {
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

  const auto started = std::chrono::steady_clock::now();
  const RetryPolicy& policy = impl.options.retry;
  for (int attempt = 1;; ++attempt) {
    if (impl.cancelled()) return make_error(ErrorKind::cancelled, "cancelled before sending");
    auto result = impl.attempt(http, request);
    if (result) return result;
    Error error = result.error();
    if (error.retryable() && error.retry_after && *error.retry_after > policy.max_retry_after) {
      // Never a silent hour: a wait past the cap is the caller's decision, not ours.
      error.message += " (the server asked to wait " + std::to_string(error.retry_after->count()) +
                       " ms, more than the " + std::to_string(policy.max_retry_after.count()) +
                       " ms clef waits)";
      return error;
    }
    if (!error.retryable() || attempt >= policy.max_attempts) {
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
