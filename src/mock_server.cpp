#include "clef/mock.hpp"

#include <cctype>
#include <fstream>
#include <stdexcept>

#include "clef/cassette.hpp"

#include <httplib.h>
#include <cstdio>
#include <regex>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace clef {
namespace {

using Json = nlohmann::ordered_json;

struct Reply {
  int status = 200;
  Json body;
  std::vector<std::pair<std::string, std::string>> headers;
};

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

/// A uniform draw in [0, 1) for request `call` of a run seeded `seed` (SplitMix64), one stream
/// per kind of fault so that drops and failures are independent.
double unit_draw(std::uint64_t seed, int call, std::uint64_t stream) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + (static_cast<std::uint64_t>(call) << 1) + stream;
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0;
}

/// Deterministic "model": a logit per (state, question, option).
double logit(const std::string& state, const std::string& question, const std::string& option) {
  return static_cast<double>(fnv1a(state + "\x1f" + question + "\x1f" + option) % 1000) / 160.0;
}

std::vector<double> softmax(const std::vector<double>& logits) {
  const double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p;
  double sum = 0;
  for (double l : logits) sum += std::exp(l - top);
  for (double l : logits) p.push_back(std::exp(l - top) / sum);
  return p;
}

int decimals_of(MockProfile shape) {
  switch (shape) {
    case MockProfile::workers_ai:
    case MockProfile::ollaya:
      return 4;
    case MockProfile::typesafe:
      return 2;
    default:
      return -1;  // Ollama, llama.cpp, Laya: unrounded floats
  }
}

/// A probability as each server's JSON encoder writes it: Go and JS print 1 and 0 as integers.
Json number_as_sent(MockProfile shape, double value) {
  const int decimals = decimals_of(shape);
  if (decimals >= 0) {
    const double scale = std::pow(10.0, decimals);
    value = std::round(value * scale) / scale;
  }
  const bool integer_encoder = shape == MockProfile::ollama || shape == MockProfile::workers_ai;
  if (integer_encoder && value == std::floor(value)) return static_cast<long long>(value);
  return value;
}

double entropy_confidence(const std::vector<double>& p) {
  double h = 0;
  for (double x : p)
    if (x > 0) h -= x * std::log(x);
  return 1.0 - h / std::log(static_cast<double>(p.size()));
}

double max_confidence(const std::vector<double>& p) {
  const double n = static_cast<double>(p.size());
  return (n * *std::max_element(p.begin(), p.end()) - 1.0) / (n - 1.0);
}

bool uses_entropy(MockProfile shape) {
  return shape == MockProfile::ollama || shape == MockProfile::laya ||
         shape == MockProfile::workers_ai || shape == MockProfile::ollaya;
}

Json probabilities_object(MockProfile shape, const std::vector<std::string>& keys,
                          const std::vector<double>& p) {
  std::vector<std::size_t> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (shape == MockProfile::ollama) {  // Go marshals map keys sorted
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return keys[a] < keys[b]; });
  } else if (shape == MockProfile::laya) {  // most likely first
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return p[a] > p[b]; });
  }
  Json out = Json::object();
  for (std::size_t i : order) out[keys[i]] = number_as_sent(shape, p[i]);
  return out;
}

/// Published observations for the Clef-Flash card's ticket (vectors.md TV-3): clef-flash:9b on a
/// local Ollama gave billing 0.9764 / technical 0.0128 / other 0.0109 for the team question, and
/// the Ollama decision guide reports a refund probability of 0.9989. The fake replays them.
constexpr const char* card_ticket = "I was charged twice. Please refund the extra payment.";

std::optional<std::vector<double>> recorded_choice(const std::string& state,
                                                   const std::vector<std::string>& keys) {
  if (state.find(card_ticket) == std::string::npos) return std::nullopt;
  if (keys != std::vector<std::string>{"billing", "technical", "other"}) return std::nullopt;
  return std::vector<double>{0.9764, 0.0128, 0.0109};
}

/// A rule's answer as a distribution over `keys`: the named key gets the rule's probability and
/// the others share the rest equally. Nullopt when the rule names no key.
std::optional<std::vector<double>> ruled(const MockRule& rule, const std::vector<std::string>& keys,
                                         const std::vector<std::string>& legend) {
  std::size_t at = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == rule.answer || (i < legend.size() && legend[i] == rule.answer)) at = i;
  }
  if (at == keys.size() || keys.size() < 2) return std::nullopt;
  std::vector<double> p(keys.size(),
                        (1.0 - rule.probability) / static_cast<double>(keys.size() - 1));
  p[at] = rule.probability;
  return p;
}

Json answer_for(MockProfile shape, const std::string& state, const std::string& name,
                const Json& question, const MockRule* rule) {
  const std::string type = question.value("type", "");
  Json answer = {{"type", type}};
  if (type == "noul") {
    double p = 1.0 / (1.0 + std::exp(-(logit(state, name, "true") * 2.0 - 4.0)));
    if (state.find(card_ticket) != std::string::npos && name == "refund") p = 0.9989;
    if (rule && (rule->answer == "yes" || rule->answer == "true")) p = rule->probability;
    if (rule && (rule->answer == "no" || rule->answer == "false")) p = 1.0 - rule->probability;
    answer["noul"] = number_as_sent(shape, p);
    return answer;
  }
  std::vector<std::string> keys;
  std::vector<std::string> legend;
  if (type == "choice") {
    for (const auto& item : question["criteria"].items()) keys.push_back(item.key());
  } else {
    for (std::size_t i = 0; i < question["criteria"].size(); ++i) {
      keys.push_back(std::to_string(i));
      legend.push_back(question["criteria"][i].is_string()
                           ? question["criteria"][i].get<std::string>()
                           : question["criteria"][i].dump());
    }
  }
  std::vector<double> logits;
  for (const auto& key : keys) logits.push_back(logit(state, name, key));
  std::optional<std::vector<double>> forced = rule ? ruled(*rule, keys, legend) : std::nullopt;
  if (!forced) forced = recorded_choice(state, keys);
  const std::vector<double> p = forced.value_or(softmax(logits));
  const std::size_t best = std::max_element(p.begin(), p.end()) - p.begin();
  const double confidence = uses_entropy(shape) ? entropy_confidence(p) : max_confidence(p);
  if (type == "choice") {
    answer["choice"] = keys[best];
    if (shape == MockProfile::ollaya) answer["confidence"] = number_as_sent(shape, confidence);
    answer["probabilities"] = probabilities_object(shape, keys, p);
    if (shape != MockProfile::ollaya) answer["confidence"] = number_as_sent(shape, confidence);
    return answer;
  }
  double expected = 0;
  for (std::size_t i = 0; i < p.size(); ++i) expected += static_cast<double>(i) * p[i];
  answer["score"] = number_as_sent(shape, expected);
  if (shape != MockProfile::ollama && shape != MockProfile::laya) {
    Json l = Json::object();
    for (std::size_t i = 0; i < legend.size(); ++i) l[std::to_string(i)] = legend[i];
    answer["legend"] = l;
  }
  answer["probabilities"] = probabilities_object(shape, keys, p);
  answer["confidence"] = number_as_sent(shape, confidence);
  return answer;
}

/// Each server's error body for `message` at `status`.
Reply error_reply(MockProfile shape, int status, const std::string& message,
                  const std::string& code = "") {
  Reply reply;
  reply.status = status;
  switch (shape) {
    case MockProfile::ollama:
      reply.body = {{"error", message}};
      break;
    case MockProfile::workers_ai:
      reply.body = {
          {"errors",
           Json::array({{{"message", message}, {"code", code.empty() ? 5006 : std::stoi(code)}}})},
          {"success", false},
          {"result", Json::object()},
          {"messages", Json::array()}};
      break;
    case MockProfile::typesafe:
      if (status == 422) {
        reply.body = {
            {"detail",
             Json::array({{{"loc", Json::array({"body", code.empty() ? "questions" : code})},
                           {"msg", message},
                           {"type", "value_error"}}})}};
      } else {
        reply.body = {
            {"detail",
             {{"type", code.empty() ? "invalid_request_error" : code}, {"message", message}}}};
      }
      break;
    case MockProfile::llamacpp:
      reply.body = {
          {"error",
           {{"code", status},
            {"message", message},
            {"type", status == 422 ? "unprocessable_entity_error" : "invalid_request_error"}}}};
      break;
    case MockProfile::laya:
      reply.body = {{"detail", message}};
      break;
    case MockProfile::ollaya:
      reply.body = {{"error", message},
                    {"code", code.empty() ? "INVALID_REQUEST" : code},
                    {"detail", Json::array()}};
      break;
  }
  return reply;
}

int invalid_status(MockProfile shape) {
  switch (shape) {
    case MockProfile::ollama:
      return 400;
    case MockProfile::workers_ai:
      return 400;
    default:
      return 422;
  }
}

/// The checks the servers make on a body; the first problem found, or "".
std::string check_body(MockProfile shape, const Json& body, bool has_images) {
  if (!body.is_object()) return "request body must be a JSON object";
  static const std::set<std::string> known = {"model", "state", "questions", "images",
                                              "keep_alive"};
  if (shape == MockProfile::ollama) {
    for (const auto& item : body.items()) {
      if (!known.count(item.key())) return "json: unknown field \"" + item.key() + "\"";
    }
    if (body.contains("keep_alive") && body["keep_alive"].is_string()) {
      const std::string k = body["keep_alive"];
      if (!k.empty() && k.find_first_not_of("-0123456789") == std::string::npos) {
        return "time: missing unit in duration \"" + k + "\"";
      }
    }
  }
  if (body.contains("model") && !body["model"].is_string()) return "model: must be a string";
  if (!body.contains("state") || body["state"].is_null()) return "state: Field required";
  const auto& questions = body.value("questions", Json());
  if (!questions.is_object() || questions.empty() || questions.size() > 64) {
    return "questions: must hold 1 to 64 questions";
  }
  for (const auto& [name, q] : questions.items()) {
    const std::string at = "questions." + name;
    if (!q.is_object()) return at + ": must be an object";
    const std::string type = q.value("type", "");
    // Workers AI, Ollama's Clef models and TypeSafe read structured (object or array)
    // instructions and descriptions; the others are only documented with strings.
    const bool structured_ok = shape == MockProfile::ollama || shape == MockProfile::workers_ai ||
                               shape == MockProfile::typesafe;
    const Json instructions = q.value("instructions", Json());
    const bool structured = instructions.is_object() || instructions.is_array();
    if (!(instructions.is_string() || (structured_ok && structured)) || instructions.empty() ||
        (instructions.is_string() && instructions.get<std::string>().empty())) {
      return at + ".instructions: must be a non-empty string";
    }
    if (type == "choice") {
      if (!q.contains("criteria") || !q["criteria"].is_object() || q["criteria"].size() < 2) {
        return at + ".criteria: a choice needs at least 2 options";
      }
      if (shape == MockProfile::ollama && q["criteria"].size() > 26) {
        return at + ".criteria: at most 26 options";
      }
    } else if (type == "noul") {
      if (q.contains("criteria")) {
        if (!q["criteria"].is_object()) return at + ".criteria: must be an object";
        for (const auto& item : q["criteria"].items()) {
          if (item.key() != "true" && item.key() != "false") {
            return at + ".criteria: unknown key \"" + item.key() + "\"";
          }
        }
      }
    } else if (type == "score") {
      const std::size_t max = shape == MockProfile::ollama ? 26 : 10;
      if (!q.contains("criteria") || !q["criteria"].is_array() || q["criteria"].size() < 2 ||
          q["criteria"].size() > max) {
        return at + ".criteria: a score needs 2 to " + std::to_string(max) + " levels";
      }
    } else {
      return at + ".type: unknown question type \"" + type + "\"";
    }
  }
  if (has_images) {
    const auto& images = body["images"];
    if (!images.is_array()) return "images: must be an array";
    for (const auto& image : images) {
      if (!image.is_string()) return "images: each image must be a string";
      const bool data_url = image.get<std::string>().rfind("data:", 0) == 0;
      if (shape == MockProfile::ollama && data_url) {
        return "invalid image input: send raw base64, not a data URL";
      }
      if (shape == MockProfile::workers_ai && !data_url) return "images: expected a data URL";
    }
    if (shape == MockProfile::workers_ai && images.size() > 4) return "images: at most 4";
  }
  return {};
}

/// Debian's libcpp-httplib is built with a listen backlog of 5: a client opening 16 connections
/// at once loses SYNs and waits a second for the retransmit. Real servers use far larger
/// backlogs, so find our listening socket and raise it (listen() again updates it on Linux).
void widen_listen_backlog(int port) {
  for (int fd = 3; fd < 4096; ++fd) {
    sockaddr_in address{};
    socklen_t length = sizeof address;
    int listening = 0;
    socklen_t flag_length = sizeof listening;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) continue;
    if (address.sin_family != AF_INET || ntohs(address.sin_port) != port) continue;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &flag_length) != 0 || !listening)
      continue;
    ::listen(fd, 1024);
    return;
  }
}

bool version_at_least(const std::string& version, int major, int minor, int patch) {
  int a = 0, b = 0, c = 0;
  std::sscanf(version.c_str(), "%d.%d.%d", &a, &b, &c);
  return std::tie(a, b, c) >= std::tie(major, minor, patch);
}

}  // namespace

std::string MockRequest::header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (strcasecmp(key.c_str(), name.c_str()) == 0) return value;
  }
  return {};
}

struct MockServer::Impl {
  MockProfile shape;
  httplib::Server server;
  std::thread thread;
  mutable std::mutex mutex;
  std::vector<MockRequest> recorded;
  std::vector<std::string> models = {"clef-flash", "clef-flash:latest"};
  std::vector<std::string> other_models = {"llama3:latest"};  // pulled, not decision-capable
  std::string version = "0.35.1";
  std::string token = "test-token";  // Workers AI expects this Bearer token
  std::function<std::optional<MockReply>(const MockRequest&, int)> script;

  std::vector<MockRule> rules;
  MockFaults faults;
  std::shared_ptr<Transport> cassette;
  std::unique_ptr<std::ofstream> log;

  /// The fault for decision request `call`, if one is drawn.
  std::optional<Reply> fault(int call) const {
    if (faults.quota_exhausted) {
      Reply reply = error_reply(shape, 429, "you have used up your daily free allocation", "4006");
      return reply;
    }
    double u = unit_draw(faults.seed, call, 0);
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

  bool drops(int call) const {
    if (faults.drop_rate <= 0) return false;
    return unit_draw(faults.seed, call, 1) < faults.drop_rate;
  }

  void write_log(const MockRequest& request) {
    if (!log) return;
    Json headers = Json::object();
    for (const auto& [name, value] : request.headers) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower != "authorization") headers[lower] = value;
    }
    const auto body = Json::parse(request.body, nullptr, false);
    Json line = {{"method", request.method},
                 {"path", request.path},
                 {"body", body.is_discarded() ? Json(request.body) : body},
                 {"headers", headers}};
    *log << line.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n" << std::flush;
  }
  std::map<std::string, std::string> digests;  ///< /api/tags digests set by a test

  /// True when a rule answers some question of this request: rules come before a cassette.
  bool any_rule_covers(const MockRequest& request) const {
    if (rules.empty()) return false;
    const auto body = Json::parse(request.body, nullptr, false);
    if (!body.is_object() || !body.contains("questions") || !body["questions"].is_object())
      return false;
    const std::string model = body.value("model", "");
    const std::string state = body.contains("state") && body["state"].is_string()
                                  ? body["state"].get<std::string>()
                                  : (body.contains("state") ? body["state"].dump() : "");
    for (const auto& item : body["questions"].items()) {
      if (rule_for(model, item.key(), state)) return true;
    }
    return false;
  }

  /// The first rule for this model and question whose pattern occurs in the state.
  const MockRule* rule_for(const std::string& model, const std::string& question,
                           const std::string& state) const {
    for (const auto& rule : rules) {
      if (!rule.model.empty() && rule.model != model && rule.model + ":latest" != model) continue;
      if (rule.question != question) continue;
      if (std::regex_search(state, rule.pattern)) return &rule;
    }
    return nullptr;
  }

  bool has_model(const std::string& name) const {
    return std::find(models.begin(), models.end(), name) != models.end();
  }

  Reply simulate(const MockRequest& request) const {
    const auto body = Json::parse(request.body, nullptr, false);
    if (body.is_discarded()) {
      if (shape == MockProfile::workers_ai)
        return error_reply(shape, 400, "Malformed JSON", "5006");
      return error_reply(shape, 400, "invalid JSON body");
    }
    std::string model = body.is_object() ? body.value("model", "") : "";
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
      if (!has_model(path_model)) return error_reply(shape, 400, "No such model", "5007");
      if (model != path_model) {
        return error_reply(shape, 400, "model in body must match the model in the URL", "5006");
      }
    }
    if (shape == MockProfile::ollama) {
      if (std::find(other_models.begin(), other_models.end(), model) != other_models.end() ||
          std::find(other_models.begin(), other_models.end(), model + ":latest") !=
              other_models.end()) {
        return error_reply(shape, 400, "\"" + model + "\" does not support decisions");
      }
      if (!has_model(model)) {
        return error_reply(shape, 404, "model \"" + model + "\" not found, try pulling it first");
      }
    }
    const bool has_images = body.is_object() && body.contains("images");
    if (shape == MockProfile::ollama && !has_images && request.body.size() > 64 * 1024) {
      return error_reply(shape, 413, "request body must not exceed 64 KiB without images");
    }
    if (auto problem = check_body(shape, body, has_images); !problem.empty()) {
      return error_reply(shape, invalid_status(shape), problem);
    }

    const std::string state = body["state"].dump();
    const std::string state_text =
        body["state"].is_string() ? body["state"].get<std::string>() : state;
    Json answers = Json::object();
    for (const auto& [name, q] : body["questions"].items())
      answers[name] = answer_for(shape, state, name, q, rule_for(model, name, state_text));
    Json decision = {{"model", shape == MockProfile::typesafe ? "jev-1.13.0" : model},
                     {"answers", answers}};
    const int questions = static_cast<int>(body["questions"].size());
    decision["usage"] = {{"input_tokens", static_cast<int>(request.body.size() / 4)},
                         {"output_tokens", shape == MockProfile::typesafe ? questions * 10 : 0}};
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
};

MockServer::MockServer(MockProfile shape, int port) : m_impl(std::make_unique<Impl>()) {
  m_impl->shape = shape;
  Impl& impl = *m_impl;
  // Enough threads for every keep-alive connection a benchmark holds open at once.
  impl.server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  impl.server.set_keep_alive_max_count(1000000);
  impl.server.set_tcp_nodelay(true);  // as Go's net/http and uvicorn do: no Nagle stalls
  impl.server.set_payload_max_length(64 * 1024 * 1024);

  auto handle = [this](const httplib::Request& req, httplib::Response& res) {
    Impl& state = *m_impl;
    const int call = m_calls.fetch_add(1);
    MockRequest recorded{req.method, req.path, req.body, {}, req.remote_port};
    for (const auto& [key, value] : req.headers) recorded.headers.emplace(key, value);
    {
      std::lock_guard<std::mutex> lock(state.mutex);
      state.recorded.push_back(recorded);
      state.write_log(recorded);
    }
    state.add_request_id(res, call);
    std::function<std::optional<MockReply>(const MockRequest&, int)> script;
    {
      std::lock_guard<std::mutex> lock(state.mutex);
      script = state.script;
    }
    if (script) {
      if (auto scripted = script(recorded, call)) {
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
    if (const auto latency = m_latency_ms.load(); latency > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(latency));
    }
    if (auto fault = state.fault(call)) {
      res.status = fault->status;
      for (const auto& [name, value] : fault->headers) res.set_header(name, value);
      res.set_content(fault->body.dump(), "application/json; charset=utf-8");
      return;
    }
    if (state.drops(call)) {
      res.set_content_provider(
          64, "application/json",
          [](std::size_t, std::size_t, httplib::DataSink&) { return false; });  // no body
      return;
    }
    if (state.shape == MockProfile::ollama && !version_at_least(state.version, 0, 35, 1)) {
      res.status = 404;  // an Ollama too old for System One: Go's plain-text not-found page
      res.set_content("404 page not found", "text/plain; charset=utf-8");
      return;
    }
    if (state.cassette && !state.any_rule_covers(recorded)) {
      HttpRequest asked;
      asked.url = "http://mock" + recorded.path;
      asked.body = recorded.body;
      if (auto hit = state.cassette->send(asked)) {
        res.status = hit->status;
        std::string type = "application/json";
        for (const auto& [name, value] : hit->headers) {
          if (name == "content-type")
            type = value;
          else
            res.set_header(name, value);
        }
        res.set_content(hit->body, type);
        return;
      }
    }
    const Reply reply = state.simulate(recorded);
    res.status = reply.status;
    for (const auto& [name, value] : reply.headers) res.set_header(name, value);
    res.set_content(reply.body.dump(), "application/json; charset=utf-8");
  };
  impl.server.Post("/v1/systemone", handle);
  impl.server.Post(R"(/client/v4/accounts/([^/]+)/ai/run/(.+))", handle);
  impl.server.Post("/api/show", [this](const httplib::Request& req, httplib::Response& res) {
    Impl& state = *m_impl;
    const auto body = Json::parse(req.body, nullptr, false);
    std::string model = body.is_object() ? body.value("model", body.value("name", "")) : "";
    if (model.find(':') == std::string::npos) model += ":latest";
    Json capabilities;
    if (state.has_model(model))
      capabilities = {"completion", "decision", "vision"};
    else if (std::find(state.other_models.begin(), state.other_models.end(), model) !=
             state.other_models.end()) {
      capabilities = {"completion"};
    } else {
      res.status = 404;
      res.set_content(Json({{"error", "model '" + model + "' not found"}}).dump(),
                      "application/json");
      return;
    }
    res.set_content(
        Json({{"capabilities", capabilities}, {"details", {{"family", "clef"}}}}).dump(),
        "application/json");
  });
  impl.server.Get("/api/tags", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(m_impl->mutex);
    Json models = Json::array();
    auto add = [&](const std::string& name) {
      if (name.find(':') == std::string::npos) return;
      const auto digest = m_impl->digests.find(name);
      char fallback[17];
      std::snprintf(fallback, sizeof fallback, "%016llx",
                    static_cast<unsigned long long>(fnv1a(name)));
      models.push_back(
          {{"name", name},
           {"model", name},
           {"size", 5400000000LL},
           {"digest",
            digest != m_impl->digests.end() ? digest->second : std::string(fallback) + fallback}});
    };
    for (const auto& m : m_impl->models) add(m);
    for (const auto& m : m_impl->other_models) add(m);
    res.set_content(Json({{"models", models}}).dump(), "application/json");
  });
  impl.server.Get("/api/version", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(Json({{"version", m_impl->version}}).dump(), "application/json");
  });

  if (port > 0) {
    if (!impl.server.bind_to_port("127.0.0.1", port)) {
      throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port) +
                               " (is it in use?)");
    }
    m_port = port;
  } else {
    m_port = impl.server.bind_to_any_port("127.0.0.1");
  }
  widen_listen_backlog(m_port);
  impl.thread = std::thread([&impl] { impl.server.listen_after_bind(); });
  while (!impl.server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

MockServer::~MockServer() {
  m_impl->server.stop();
  if (m_impl->thread.joinable()) m_impl->thread.join();
}

void MockServer::set_models(std::vector<std::string> models) {
  m_impl->models = std::move(models);
}

void MockServer::set_model_digest(const std::string& name, std::string digest) {
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  m_impl->digests[name] = std::move(digest);
}

void MockServer::set_faults(MockFaults faults) {
  m_impl->faults = std::move(faults);
}

bool MockServer::set_cassette(const std::string& path, std::string& problem) {
  auto replay = make_replay_transport(path, cassette_tag(m_impl->shape));
  if (!replay) {
    problem = replay.error().to_string();
    return false;
  }
  m_impl->cassette = std::move(replay).value();
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
  m_impl->rules = std::move(rules);
}

std::optional<std::vector<MockRule>> parse_mock_rules(const std::string& text,
                                                      std::string& problem) {
  const auto root = Json::parse(text, nullptr, false);
  if (root.is_discarded() || !root.is_object() || !root.contains("rules") ||
      !root["rules"].is_array()) {
    problem = "expected {\"rules\": [...]}";
    return std::nullopt;
  }
  std::vector<MockRule> rules;
  for (std::size_t i = 0; i < root["rules"].size(); ++i) {
    const Json& r = root["rules"][i];
    const std::string where = "rules[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("question") || !r["question"].is_string() ||
        !r.contains("match") || !r["match"].is_string() || !r.contains("answer") ||
        !r["answer"].is_string()) {
      problem = where + ": needs string \"question\", \"match\" and \"answer\"";
      return std::nullopt;
    }
    MockRule rule;
    rule.model = r.contains("model") && r["model"].is_string() ? r["model"].get<std::string>() : "";
    rule.question = r["question"].get<std::string>();
    rule.answer = r["answer"].get<std::string>();
    if (r.contains("probability")) {
      if (!r["probability"].is_number() || r["probability"].get<double>() < 0 ||
          r["probability"].get<double>() > 1) {
        problem = where + ": \"probability\" must be a number in [0, 1]";
        return std::nullopt;
      }
      rule.probability = r["probability"].get<double>();
    }
    try {
      rule.pattern =
          std::regex(r["match"].get<std::string>(), std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
      problem = where + ": \"match\" is not a valid regular expression (" + e.what() + ")";
      return std::nullopt;
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

void MockServer::set_script(
    std::function<std::optional<MockReply>(const MockRequest&, int)> script) {
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  m_impl->script = std::move(script);
}

void MockServer::set_version(std::string version) {
  m_impl->version = std::move(version);
}

std::vector<MockRequest> MockServer::requests() const {
  std::lock_guard<std::mutex> lock(m_impl->mutex);
  return m_impl->recorded;
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

int unused_port() {
  // Bind without listening, read the port, close: connecting there is refused.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

}  // namespace clef
