// Internal: one object per backend. What Ollama, Workers AI (with AI Gateway), a System One
// server (TypeSafe's form among them) and OpenAI's decisions each do their own way lives in that
// backend's file: where its options come from, its endpoint, the body's model name and form,
// what it takes, how a success is unwrapped, what its errors mean, what it says a request cost.
// The files by concern (wire_request, request_limits, typesafe_assets, wire_response,
// http_errors, options, cost) keep what every backend shares and ask wire_of(backend) for the
// rest: wire_of is the one switch on Backend outside the backends' files and the option parser.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "clef/backend.hpp"
#include "clef/cost.hpp"
#include "clef/decision.hpp"
#include "clef/options.hpp"
#include "clef/request.hpp"
#include "clef/transport.hpp"
#include "model/question_wire.hpp"
#include "util/json_text.hpp"
#include "util/redact.hpp"

namespace clef::detail {

/// What a server's error body said (http_errors.cpp reads every shape into it).
struct ServerText {
  std::string message;
  std::string code;
  bool json = false;  ///< The body was JSON (an old Ollama's 404 is plain text).
};

/// A 2xx answer as a backend reads it: the parsed body, the response, what was asked.
struct Success {
  Json body;
  const HttpResponse& response;
  const std::vector<Question>& questions;
  const ValidationOptions& validation;
  const Secrets& secret;
};

class BackendWire {
 public:
  virtual ~BackendWire() = default;

  /// What the rest of clef may know of it (clef::traits_of): its name, variables, commands.
  virtual const BackendTraits& traits() const = 0;

  // Options (options.cpp).
  /// ClientOptions::from_environment's part: the API token from traits().token_variable (trimmed),
  /// unless the backend reads more (a host, an account).
  virtual void read_environment(ClientOptions& options) const;
  /// The base URL requests go to, from the options (and the environment), or why there is none.
  virtual Result<std::string> base_url(const ClientOptions& options) const = 0;
  /// Whether requests go through Cloudflare AI Gateway (Workers AI only).
  virtual bool through_gateway(const ClientOptions& options) const;

  // The request (wire_request.cpp).
  /// Where a decision about `model` goes; {base}/v1/systemone unless the backend says otherwise.
  virtual std::string decision_url(const ClientOptions& options, const std::string& base_url,
                                   const std::string& model) const;
  /// The model as the body names it: as given unless the backend says otherwise.
  virtual Result<std::string> body_model_name(const std::string& model) const;
  /// The compact body, the extra fields excepted: the System One form unless the backend has
  /// its own. `questions` is the request's question set, validated and written once.
  virtual Result<std::string> write_body(const DecisionRequest& request, const std::string& model,
                                         const PreparedQuestions& questions) const;
  /// The top-level fields write_body writes, which an extra field may not repeat.
  virtual const std::set<std::string>& fields_sent() const;

  // What it takes (request_limits.cpp, typesafe_assets.cpp).
  /// Who refuses keep_alive ("Workers AI refuses"), or null when it is sent.
  virtual const char* keep_alive_refusal() const { return nullptr; }
  /// Who takes images only ("Ollama's System One API takes"), or null when a model may take audio
  /// and video.
  virtual const char* images_only() const { return nullptr; }
  /// The name of a form with no box question ("Ollama's System One API"), or null for
  /// TypeSafe's, which has them.
  virtual const char* form_without_boxes() const = 0;
  /// Whether a request may go in TypeSafe's assets form.
  virtual bool takes_assets_form() const { return false; }
  /// Whether images go as raw base64 (Ollama) rather than data URLs.
  virtual bool raw_base64_images() const { return false; }
  /// The backend's own limits on images (Workers AI's).
  virtual Status check_images(const DecisionRequest& request) const;
  /// The serialized body against the backend's cap.
  virtual Status check_body_size(std::size_t body_bytes, const std::string& model) const;

  // The answer (wire_response.cpp).
  /// A 2xx body read into a Decision, its request id and raw_json set: the System One shape
  /// unless the backend wraps or words it otherwise.
  virtual Result<Decision> read_success(Success success) const;
  /// Whether a 2xx body is the System One reply itself (no envelope, no dialect): then
  /// read_decision tries quick_reply.hpp's reader on its text before read_success.
  virtual bool sends_bare_reply() const { return true; }

  // Errors (http_errors.cpp).
  /// A 404's hint: the model is missing, or nothing answers at `at`. `plain_path`: the URL's
  /// path is /v1/systemone itself (or unknown).
  virtual std::string not_found_hint(const ServerText& text, const std::string& model,
                                     const std::string& at, bool plain_path) const;
  /// What to check when the server refused the credentials (401, 403).
  virtual std::string credentials_hint(int status, const ServerText& text) const;
  /// A 400's hint of the backend's own, or nullopt.
  virtual std::optional<std::string> bad_request_hint(const ServerText& text,
                                                      const std::string& model) const;
  /// The error for a non-2xx response, amended where the backend's codes mean more than its
  /// status says.
  virtual void amend_error(Error& error, const ServerText& text, int status,
                           std::string_view url) const;

  // Cost (cost.cpp).
  /// What the server measured this request at (Workers AI's cf-ai-neurons), or nullopt.
  virtual std::optional<Cost> measured_cost(const HttpResponse& response) const;
};

/// The object for `backend`.
const BackendWire& wire_of(Backend backend);

/// The four objects, each in its backend's file.
const BackendWire& ollama_wire();
const BackendWire& workers_ai_wire();
const BackendWire& systemone_wire();
const BackendWire& openai_wire();

/// The environment variable's value, or "" when it is not set.
std::string env(const char* name);

/// Whether a 404's server text blames the model.
bool mentions_model(const ServerText& text);

/// The System One shape read from `success` (already out of any envelope), `text` the body
/// text it came from: every backend's but OpenAI's.
Result<Decision> read_system_one(const Success& success, std::string_view text);

/// A 2xx body clef cannot use, stamped with what the response said about itself.
Error unusable_success(Error error, const Success& success);

}  // namespace clef::detail
