// clef: the client — one API for Ollama, Cloudflare Workers AI and other System One servers.
// What it can be told is in <clef/options.hpp>; the backends in <clef/backend.hpp>.
#pragma once

#include <memory>
#include <string>

#include "clef/decision.hpp"
#include "clef/options.hpp"
#include "clef/request.hpp"
#include "clef/result.hpp"
#include "clef/transport.hpp"

namespace clef {

/// A System One client. Cheap to share across threads; decide() may be called concurrently.
///
///     auto client = clef::Client::create(clef::ClientOptions::from_environment(clef::Backend::ollama));
///     if (!client) return 1;  // client.error().to_string() says why
///     clef::DecisionRequest request;
///     request.state = clef::State::text("I was charged twice.");
///     request.questions = {clef::Question::yes_no("refund", "Does the customer want money back?")};
///     clef::Result<clef::Decision> decision = client->decide(request);
class Client {
 public:
  /// Checks the options (URL, credentials) and builds the client.
  static Result<Client> create(ClientOptions options);

  /// Validates, serializes and sends `request`, retrying as the policy allows, and parses and
  /// validates the answers.
  Result<Decision> decide(const DecisionRequest& request) const;
  /// decide() with `retry` instead of the options' retry policy.
  Result<Decision> decide(const DecisionRequest& request, const RetryPolicy& retry) const;

  /// The exact request body decide() would send (validation included), for --dry-run.
  Result<std::string> request_body(const DecisionRequest& request) const;
  /// The URL decide() posts to (no secrets are ever part of it).
  std::string endpoint(const DecisionRequest& request) const;
  /// The headers decide() sends, the Authorization value replaced by "Bearer <redacted>" (or
  /// "Basic <redacted>" for credentials given in the base URL).
  Headers redacted_headers() const;

  const ClientOptions& options() const noexcept;

 private:
  struct Impl;
  explicit Client(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> m_impl;
};

}  // namespace clef
