// clef::MockServer: routes, the request log, faults, the cassette and the simulated decision.
#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "ascii.hpp"
#include "clef/cassette.hpp"
#include "clef/mock.hpp"

#include "clef/ollama.hpp"
#include "json_text.hpp"
#include "mock_answers.hpp"
#include "mock_checks.hpp"
#include "mock_errors.hpp"
#include "mock_http.hpp"

namespace clef {
namespace {

using mock_detail::error_reply;
using mock_detail::Json;
using mock_detail::Reply;

/// The largest request body read at all; larger ones get 413 before they are read whole.
constexpr std::size_t max_body_bytes = 64u * 1024u * 1024u;
/// Ollama refuses a body larger than this without images.
constexpr std::size_t ollama_text_body_bytes = 64u * 1024u;
/// requests() holds bodies up to this many bytes in all; the oldest requests go first.
constexpr std::size_t max_logged_body_bytes = 256u * 1024u * 1024u;

bool version_at_least(const std::string& version, int major, int minor, int patch) {
  int a = 0, b = 0, c = 0;
  std::sscanf(version.c_str(), "%d.%d.%d", &a, &b, &c);
  return std::tie(a, b, c) >= std::tie(major, minor, patch);
}

/// Response headers a cassette may have recorded that describe the recorded connection and
/// framing, not the answer: sent again beside the mock's own, they make malformed HTTP (two
/// Content-Lengths, a chunked header on a body that is not).
bool is_framing_header(const std::string& name) {
  static const char* const framing[] = {"content-length", "transfer-encoding", "connection",
                                        "keep-alive",     "proxy-connection",  "te",
                                        "trailer",        "upgrade",           "content-encoding"};
  for (const char* f : framing) {
    if (strcasecmp(name.c_str(), f) == 0) return true;
  }
  return false;
}

/// A request body, read once: the JSON (when it is JSON within the depth bound) and the parts
/// the rules and the default model read. A body over the profile's size cap is not read.
struct Decoded {
  bool too_large = false;
  std::optional<Json> body;
  std::string problem;  ///< why `body` is empty
  std::string model;
  std::string state_json;  ///< the state as JSON text (the default model's input)
  std::string state_text;  ///< what rules match: a string state's text, else state_json
};

Decoded decode(const std::string& text, bool too_large) {
  Decoded out;
  out.too_large = too_large;
  if (too_large) return out;
  out.body = mock_detail::parse_body(text, out.problem);
  if (!out.body || !out.body->is_object()) return out;
  out.model = detail::string_field(*out.body, "model");
  const auto state = out.body->find("state");
  if (state != out.body->end()) {
    out.state_json = detail::dump_compact(*state);
    out.state_text = state->is_string() ? state->get<std::string>() : out.state_json;
  }
  return out;
}

}  // namespace

std::string MockRequest::header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (strcasecmp(key.c_str(), name.c_str()) == 0) return value;
  }
  return {};
}

/// What tests and flags may change while the server runs. Replaced whole under the mutex and
/// read through a snapshot: a request sees one consistent set, and never a vector that a
/// setter is replacing under it.
struct MockSettings {
  std::vector<std::string> models = {"clef-flash", "clef-flash:latest"};
  std::vector<std::string> other_models = {"llama3:latest"};  // pulled, not decision-capable
  std::string version = "0.35.1";
  std::function<std::optional<MockReply>(const MockRequest&, int)> script;
  std::vector<MockRule> rules;
  MockFaults faults;
  std::shared_ptr<Transport> cassette;
  std::map<std::string, std::string> digests;  ///< /api/tags digests set by a test
};

struct MockServer::Impl {
  MockProfile shape = MockProfile::ollama;
  mock_detail::BoundedHttpServer server{max_body_bytes};
  std::thread thread;
  mutable std::mutex mutex;
  std::deque<MockRequest> recorded;
  std::size_t recorded_bytes = 0;
  std::size_t log_limit = 1000;
  std::string token = "test-token";  // Workers AI expects this Bearer token
  std::unique_ptr<std::ofstream> log;
  std::shared_ptr<const MockSettings> settings = std::make_shared<MockSettings>();

  std::shared_ptr<const MockSettings> snapshot() const {
    std::lock_guard<std::mutex> lock(mutex);
    return settings;
  }
  template <typename Change>
  void change(Change&& apply) {
    std::lock_guard<std::mutex> lock(mutex);
    auto next = std::make_shared<MockSettings>(*settings);
    apply(*next);
    settings = std::move(next);
  }

  /// Ollama names an untagged model NAME:latest; the other servers match names exactly.
  bool same_model(const std::string& a, const std::string& b) const {
    if (shape != MockProfile::ollama) return a == b;
    return mock_detail::ollama_name(a) == mock_detail::ollama_name(b);
  }
  bool has_model(const MockSettings& s, const std::string& name) const {
    return std::any_of(s.models.begin(), s.models.end(),
                       [&](const std::string& m) { return same_model(m, name); });
  }
  bool is_other_model(const MockSettings& s, const std::string& name) const {
    return std::any_of(s.other_models.begin(), s.other_models.end(),
                       [&](const std::string& m) { return same_model(m, name); });
  }

  /// True for a body over the profile's size cap (Ollama's 64 KiB for a body without images),
  /// found by a scan of its top-level members: it is refused with 413 before it is parsed,
  /// and never kept in the log.
  bool too_large(const std::string& text) const {
    return shape == MockProfile::ollama && text.size() > ollama_text_body_bytes &&
           !detail::member_text(text, "images");
  }

  /// `request` (without its body) and `body` into the --log file and the requests() log.
  void record(const MockRequest& request, const std::string& body, const Decoded& decoded) {
    std::lock_guard<std::mutex> lock(mutex);
    write_log(request, body, decoded);
    if (log_limit == 0) return;
    recorded.push_back(request);
    if (!decoded.too_large) recorded.back().body = body;
    recorded_bytes += recorded.back().body.size();
    while (recorded.size() > log_limit ||
           (recorded.size() > 1 && recorded_bytes > max_logged_body_bytes)) {
      recorded_bytes -= recorded.front().body.size();
      recorded.pop_front();
    }
  }

  void write_log(const MockRequest& request, const std::string& body, const Decoded& decoded) {
    if (!log) return;
    Json headers = Json::object();
    for (const auto& [name, value] : request.headers) {
      const std::string lower = detail::ascii_lower(name);
      if (lower != "authorization") headers[lower] = value;
    }
    Json line = {{"method", request.method}, {"path", request.path}};
    if (decoded.too_large) {
      line["body"] = nullptr;
      line["body_bytes"] = body.size();
    } else {
      line["body"] = decoded.body ? *decoded.body : Json(body);
    }
    line["headers"] = headers;
    *log << detail::dump_compact(line) << "\n" << std::flush;
  }

  /// The fault for decision request `call`, if one is drawn.
  std::optional<Reply> fault(const MockSettings& s, int call) const {
    const MockFaults& faults = s.faults;
    if (faults.quota_exhausted) {
      return error_reply(shape, 429, "you have used up your daily free allocation", "4006");
    }
    double u = mock_detail::unit_draw(faults.seed, call, 0);
    for (const auto& [status, rate] : faults.fail_rates) {
      if (u < rate) {
        Reply reply = error_reply(shape, status, status == 429 ? "rate limited" : "overloaded",
                                  status == 503 ? "QUEUE_FULL" : "");
        if (faults.retry_after_seconds && (status == 429 || status == 503))
          reply.headers.emplace_back("Retry-After", std::to_string(*faults.retry_after_seconds));
        return reply;
      }
      u -= rate;
    }
    return std::nullopt;
  }

  bool drops(const MockSettings& s, int call) const {
    const MockFaults& faults = s.faults;
    if (faults.drop_rate <= 0) return false;
    return mock_detail::unit_draw(faults.seed, call, 1) < faults.drop_rate;
  }

  /// The first rule for this model and question whose pattern occurs in the state.
  const MockRule* rule_for(const MockSettings& s, const std::string& model,
                           const std::string& question, const std::string& state) const {
    for (const auto& rule : s.rules) {
      if (!rule.model.empty() &&
          mock_detail::ollama_name(rule.model) != mock_detail::ollama_name(model))
        continue;
      if (rule.question != question) continue;
      if (rule.pattern.found_in(state)) return &rule;
    }
    return nullptr;
  }

  /// True when a rule answers some question of this request: rules come before a cassette.
  bool any_rule_covers(const MockSettings& s, const Decoded& decoded) const {
    if (s.rules.empty() || !decoded.body || !decoded.body->is_object()) return false;
    const auto questions = decoded.body->find("questions");
    if (questions == decoded.body->end() || !questions->is_object()) return false;
    for (const auto& item : questions->items()) {
      if (rule_for(s, decoded.model, item.key(), decoded.state_text)) return true;
    }
    return false;
  }

  Reply simulate(const MockSettings& s, const MockRequest& request, std::size_t body_bytes,
                 const Decoded& decoded) const {
    if (decoded.too_large) {
      return error_reply(shape, 413, "request body must not exceed 64 KiB without images");
    }
    if (!decoded.body) return mock_detail::invalid_json_reply(shape, decoded.problem);
    const Json& body = *decoded.body;
    if (!body.is_object()) {
      return error_reply(shape, mock_detail::invalid_status(shape),
                         "request body must be a JSON object");
    }
    const auto model_field = body.find("model");
    if (model_field != body.end() && !model_field->is_string()) {
      return error_reply(shape, mock_detail::invalid_status(shape),
                         "model: must be a string, not " + std::string(model_field->type_name()));
    }
    const std::string& model = decoded.model;
    if (shape == MockProfile::workers_ai) {
      const std::string prefix = "/ai/run/@cf/cloudflare/";
      const auto at = request.path.find(prefix);
      if (request.path.rfind("/client/v4/accounts/", 0) != 0 || at == std::string::npos) {
        return error_reply(shape, 404, "No route for that URI", "7000");
      }
      if (request.header("Authorization") != "Bearer " + token) {
        return error_reply(shape, 401, "Authentication error", "10000");
      }
      const std::string path_model = request.path.substr(at + prefix.size());
      if (!has_model(s, path_model)) return error_reply(shape, 400, "No such model", "5007");
      if (model != path_model) {
        return error_reply(shape, 400, "model in body must match the model in the URL", "5006");
      }
    }
    if (shape == MockProfile::ollama) {
      if (is_other_model(s, model)) {
        return error_reply(shape, 400, "\"" + model + "\" does not support decisions");
      }
      if (!has_model(s, model)) {
        return error_reply(shape, 404, "model \"" + model + "\" not found, try pulling it first");
      }
      // Pulled, even decision-capable, yet not servable there (protocol.md; the card).
      if (is_mlx_or_safetensors_tag(model)) {
        return error_reply(shape, 400,
                           "MLX models are not supported on /v1/systemone; use the default tag");
      }
    }
    if (auto problem = mock_detail::check_body(shape, body); !problem.empty()) {
      return error_reply(shape, mock_detail::invalid_status(shape), problem);
    }

    const Json& questions = body["questions"];
    Json answers = Json::object();
    for (const auto& [name, q] : questions.items()) {
      answers[name] = mock_detail::answer_for(shape, decoded.state_json, name, q,
                                              rule_for(s, model, name, decoded.state_text));
    }
    Json decision = {{"model", shape == MockProfile::typesafe ? "jev-1.13.0" : model},
                     {"answers", answers}};
    const int count = static_cast<int>(questions.size());
    decision["usage"] = {{"input_tokens", static_cast<long long>(body_bytes / 4)},
                         {"output_tokens", shape == MockProfile::typesafe ? count * 10 : 0}};
    if (shape == MockProfile::laya) {
      decision["action"] = "route";
      decision["routing"] = {{"queue", "default"}};
    }
    Reply reply;
    reply.body = decision;
    if (shape == MockProfile::workers_ai) {
      reply.body = {{"result", decision},
                    {"success", true},
                    {"errors", Json::array()},
                    {"messages", Json::array()}};
    }
    return reply;
  }

  void add_request_id(httplib::Response& response, int call) const {
    if (shape == MockProfile::typesafe || shape == MockProfile::ollaya) {
      response.set_header("x-typesafe-request-id", "req_" + std::to_string(call));
    } else if (shape == MockProfile::workers_ai) {
      response.set_header("cf-ai-req-id", "cf-" + std::to_string(call) + "-5e3f0c1a");
    }
  }

  void send(httplib::Response& res, const Reply& reply) const {
    res.status = reply.status;
    for (const auto& [name, value] : reply.headers) res.set_header(name, value);
    res.set_content(detail::dump_compact(reply.body), "application/json; charset=utf-8");
  }

  /// A recorded answer for this request, when the cassette has one.
  bool replay(const MockSettings& s, const std::string& path, const std::string& body,
              httplib::Response& res) const {
    HttpRequest asked;
    asked.url = "http://mock" + path;
    asked.body = body;
    auto hit = s.cassette->send(asked);
    if (!hit) return false;
    if (hit->status < 200 || hit->status > 599) {
      send(res, error_reply(shape, 500,
                            "the cassette's recorded status " + std::to_string(hit->status) +
                                " is not an HTTP answer"));
      return true;
    }
    res.status = hit->status;
    std::string type = "application/json";
    for (const auto& [name, value] : hit->headers) {
      if (strcasecmp(name.c_str(), "content-type") == 0)
        type = value;
      else if (!is_framing_header(name))
        res.set_header(name, value);
    }
    res.set_content(hit->body, type);
    return true;
  }

  void decide(const httplib::Request& req, httplib::Response& res, int call, long long latency_ms) {
    const Decoded decoded = decode(req.body, too_large(req.body));
    // The body is copied only where it is kept: a 50 MB body is not held twice.
    MockRequest request{req.method, req.path, {}, {}, req.remote_port};
    for (const auto& [key, value] : req.headers) request.headers.emplace(key, value);
    record(request, req.body, decoded);
    add_request_id(res, call);
    const std::shared_ptr<const MockSettings> settings_now = snapshot();
    const MockSettings& s = *settings_now;
    const auto& scripted_by = s.script;
    if (scripted_by) {
      MockRequest whole = request;
      whole.body = req.body;
      if (auto scripted = scripted_by(whole, call)) {
        if (scripted->delay.count() > 0) std::this_thread::sleep_for(scripted->delay);
        res.status = scripted->status;
        for (const auto& [name, value] : scripted->headers) res.set_header(name, value);
        if (scripted->truncate_at) {
          auto body = std::make_shared<std::string>(scripted->body);
          const std::size_t cut = *scripted->truncate_at;
          res.set_content_provider(
              body->size(), scripted->content_type,
              [body, cut](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                if (offset < cut) sink.write(body->data() + offset, cut - offset);
                return false;  // close the connection mid-body
              });
        } else {
          res.set_content(scripted->body, scripted->content_type);
        }
        return;
      }
    }
    if (latency_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(latency_ms));
    if (auto failure = fault(s, call)) return send(res, *failure);
    if (drops(s, call)) {
      res.set_content_provider(
          64, "application/json",
          [](std::size_t, std::size_t, httplib::DataSink&) { return false; });  // no body
      return;
    }
    if (shape == MockProfile::ollama && !version_at_least(s.version, 0, 35, 1)) {
      res.status = 404;  // an Ollama too old for System One: Go's plain-text not-found page
      res.set_content("404 page not found", "text/plain; charset=utf-8");
      return;
    }
    if (s.cassette && !any_rule_covers(s, decoded) && replay(s, req.path, req.body, res)) return;
    send(res, simulate(s, request, req.body.size(), decoded));
  }

  void show(const httplib::Request& req, httplib::Response& res) const {
    std::string problem;
    const auto body = mock_detail::parse_body(req.body, problem);
    auto refuse = [&](const std::string& why) {
      res.status = 400;
      res.set_content(detail::dump_compact({{"error", why}}), "application/json");
    };
    if (!body) return refuse("invalid JSON body: " + problem);
    if (!body->is_object()) return refuse("request body must be a JSON object");
    for (const char* key : {"model", "name"}) {
      const auto field = body->find(key);
      if (field != body->end() && !field->is_string()) {
        return refuse(std::string(key) + ": must be a string, not " + field->type_name());
      }
    }
    std::string model = detail::string_field(*body, "model");
    if (model.empty()) model = detail::string_field(*body, "name");
    model = mock_detail::ollama_name(model);
    const auto settings_now = snapshot();
    Json capabilities;
    if (has_model(*settings_now, model)) {
      capabilities = {"completion", "decision", "vision"};
    } else if (is_other_model(*settings_now, model)) {
      capabilities = {"completion"};
    } else {
      res.status = 404;
      res.set_content(detail::dump_compact({{"error", "model '" + model + "' not found"}}),
                      "application/json");
      return;
    }
    // An MLX build is a Safetensors model to Ollama; the rest are GGUF.
    const char* format = is_mlx_or_safetensors_tag(model) ? "safetensors" : "gguf";
    res.set_content(detail::dump_compact({{"capabilities", capabilities},
                                          {"details", {{"format", format}, {"family", "clef"}}}}),
                    "application/json");
  }

  /// Ollama's /api/tags: every model under its full name (NAME:TAG), once.
  void tags(httplib::Response& res) const {
    const auto settings_now = snapshot();
    const auto& digests = settings_now->digests;
    Json list = Json::array();
    std::set<std::string> listed;
    auto add = [&](const std::string& model) {
      const std::string name = mock_detail::ollama_name(model);
      if (!listed.insert(name).second) return;
      const auto digest = digests.find(name);
      char fallback[17];
      std::snprintf(fallback, sizeof fallback, "%016llx",
                    static_cast<unsigned long long>(mock_detail::fnv1a(name)));
      list.push_back({{"name", name},
                      {"model", name},
                      {"size", 5400000000LL},
                      {"digest", digest != digests.end() ? digest->second
                                                         : std::string(fallback) + fallback}});
    };
    for (const auto& m : settings_now->models) add(m);
    for (const auto& m : settings_now->other_models) add(m);
    res.set_content(detail::dump_compact({{"models", list}}), "application/json");
  }
};

MockServer::MockServer(MockProfile shape, int port) : m_impl(std::make_unique<Impl>()) {
  m_impl->shape = shape;
  Impl& impl = *m_impl;
  impl.server.set_keep_alive_max_count(1000000);
  // Errors cpp-httplib answers itself (a malformed request, a body past the cap) get the
  // profile's error body, as the real server would send, instead of an empty one.
  impl.server.set_error_handler(httplib::Server::HandlerWithResponse(
      [&impl](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty() || (res.status != 400 && res.status != 413 && res.status != 414))
          return httplib::Server::HandlerResponse::Unhandled;
        const std::string why = res.status == 400   ? "malformed HTTP request"
                                : res.status == 413 ? "request body must not exceed 64 MiB"
                                                    : "request URI too long";
        impl.send(res, error_reply(impl.shape, res.status, why));
        return httplib::Server::HandlerResponse::Handled;
      }));
  // A defect in the mock answers the profile's 500, never an empty body or a dead thread.
  impl.server.set_exception_handler(
      [&impl](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        impl.send(res, error_reply(impl.shape, 500, "clef mock failed: " + what));
      });

  auto decide = [this](const httplib::Request& req, httplib::Response& res) {
    m_impl->decide(req, res, m_calls.fetch_add(1), m_latency_ms.load());
  };
  impl.server.Post("/v1/systemone", decide);
  impl.server.Post(R"(/client/v4/accounts/([^/]+)/ai/run/(.+))", decide);
  // Ollama's own API; the other servers have none (a GET there is their 404).
  if (shape == MockProfile::ollama) {
    impl.server.Post("/api/show", [&impl](const httplib::Request& req, httplib::Response& res) {
      impl.show(req, res);
    });
    impl.server.Get("/api/tags",
                    [&impl](const httplib::Request&, httplib::Response& res) { impl.tags(res); });
    impl.server.Get("/api/version", [&impl](const httplib::Request&, httplib::Response& res) {
      res.set_content(detail::dump_compact({{"version", impl.snapshot()->version}}),
                      "application/json");
    });
  }

  m_port = impl.server.listen_on_loopback(port);
  impl.thread = std::thread([&impl] { impl.server.listen_after_bind(); });
  while (!impl.server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

MockServer::~MockServer() {
  m_impl->server.stop();
  if (m_impl->thread.joinable()) m_impl->thread.join();
}

void MockServer::set_models(std::vector<std::string> models) {
  m_impl->change([&](MockSettings& s) { s.models = std::move(models); });
}

void MockServer::set_model_digest(const std::string& name, std::string digest) {
  m_impl->change(
      [&](MockSettings& s) { s.digests[mock_detail::ollama_name(name)] = std::move(digest); });
}

void MockServer::set_faults(MockFaults faults) {
  m_impl->change([&](MockSettings& s) { s.faults = std::move(faults); });
}

bool MockServer::set_cassette(const std::string& path, std::string& problem) {
  auto replay = make_replay_transport(path, cassette_tag(m_impl->shape));
  if (!replay) {
    problem = replay.error().to_string();
    return false;
  }
  m_impl->change([&](MockSettings& s) { s.cassette = std::move(replay).value(); });
  return true;
}

bool MockServer::set_log(const std::string& path) {
  auto log = std::make_unique<std::ofstream>(path, std::ios::app);
  if (!*log) return false;
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  m_impl->log = std::move(log);
  return true;
}

const char* cassette_tag(MockProfile profile) noexcept {
  switch (profile) {
    case MockProfile::ollama:
      return "ollama";
    case MockProfile::workers_ai:
      return "workers-ai";
    default:
      return "systemone";
  }
}

void MockServer::set_rules(std::vector<MockRule> rules) {
  m_impl->change([&](MockSettings& s) { s.rules = std::move(rules); });
}

void MockServer::set_script(
    std::function<std::optional<MockReply>(const MockRequest&, int)> script) {
  m_impl->change([&](MockSettings& s) { s.script = std::move(script); });
}

void MockServer::set_version(std::string version) {
  m_impl->change([&](MockSettings& s) { s.version = std::move(version); });
}

std::vector<MockRequest> MockServer::requests() const {
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  return {m_impl->recorded.begin(), m_impl->recorded.end()};
}

void MockServer::set_request_log_limit(std::size_t requests) {
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  m_impl->log_limit = requests;
  while (m_impl->recorded.size() > requests) {
    m_impl->recorded_bytes -= m_impl->recorded.front().body.size();
    m_impl->recorded.pop_front();
  }
}

void MockServer::set_request_deadline(std::chrono::milliseconds deadline) {
  m_impl->server.set_request_deadline(deadline);
}

void MockServer::set_max_connections(std::size_t connections) {
  m_impl->server.set_max_connections(std::max<std::size_t>(connections, 1));
}

std::function<std::optional<MockReply>(const MockRequest&, int)> first_attempt_faults(
    int every, std::shared_ptr<std::atomic<int>> faults) {
  struct Seen {
    std::mutex mutex;
    std::set<std::string> bodies;
  };
  auto seen = std::make_shared<Seen>();
  return [=](const MockRequest& request, int) -> std::optional<MockReply> {
    std::lock_guard<std::mutex> lock(seen->mutex);
    if (!seen->bodies.insert(request.body).second) return std::nullopt;
    if (seen->bodies.size() % static_cast<std::size_t>(every) != 0) return std::nullopt;
    MockReply fault;
    fault.headers = {{"Retry-After", "0"}};
    switch ((*faults)++ % 3) {
      case 0:
        fault.status = 429;
        fault.body = R"({"error":"slow down"})";
        break;
      case 1:
        fault.status = 503;
        fault.body = R"({"error":"busy"})";
        break;
      default:
        fault.body = R"({"answers":{"urgent":{"type":"noul","noul":0.5}}})";
        fault.truncate_at = 7;
        break;
    }
    return fault;
  };
}

namespace {

/// A TCP socket bound to 127.0.0.1 on a free port; -1 when that fails.
int bound_socket(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(address.sin_port);
  return fd;
}

}  // namespace

int unused_port() {
  int port = 0;
  const int fd = bound_socket(port);
  if (fd >= 0) ::close(fd);
  return port;
}

int refusing_port() {
  // Bound without listen(): the kernel answers every SYN with a reset. The descriptor is never
  // closed, so the port stays this process's until it exits.
  int port = 0;
  (void)bound_socket(port);
  return port;
}

}  // namespace clef
