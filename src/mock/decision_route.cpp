// A decision request from arrival to answer: log it, then the script, the capacity and rate
// limit, the latency, the faults,
// an Ollama too old, the cassette, and the simulated decision.
#include "mock/decision_route.hpp"

#include "mock/error_bodies.hpp"

#include <chrono>
#include <thread>

#include "mock/cassette_replay.hpp"
#include "mock/decision.hpp"
#include "mock/faults.hpp"
#include "mock/ollama_api.hpp"
#include "mock/profile.hpp"
#include "mock/rules.hpp"
#include "mock/server_state.hpp"

namespace clef::mock_detail {
namespace {

/// The request as the log and the script see it, without its body: a 50 MB body is copied
/// only where it is kept.
MockRequest received(const httplib::Request& req) {
  MockRequest request{req.method, req.path, {}, {}, req.remote_port};
  for (const auto& [key, value] : req.headers) request.headers.emplace(key, value);
  return request;
}

/// The test's scripted reply to request `call`, when its script gives one.
std::optional<MockReply> scripted(const MockSettings& s, const MockRequest& request,
                                  const std::string& body, int call) {
  if (!s.script) return std::nullopt;
  MockRequest whole = request;
  whole.body = body;
  return s.script(whole, call);
}

}  // namespace

void serve_decision(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  const int call = state.calls.fetch_add(1);
  const long long latency_ms = state.latency_ms.load();
  const MockProfile shape = state.profile;
  const Decoded decoded = decode(shape, req.body);
  const MockRequest request = received(req);
  state.log.record(request, req.body, decoded);
  if (auto id = request_id_header(shape, call)) res.set_header(id->first, id->second);
  const std::shared_ptr<const MockSettings> settings = state.settings.snapshot();
  const MockSettings& s = *settings;
  if (auto reply = scripted(s, request, req.body, call)) return send_scripted(res, *reply);
  std::optional<Admission::Ticket> ticket;  // held until the answer is sent
  if (auto refusal = state.admission.admit(shape, s.faults, ticket)) return send(res, *refusal);
  if (latency_ms > 0 && !state.wait_latency(std::chrono::milliseconds(latency_ms)))
    return send(res, error_reply(shape, 503, "clef mock is shutting down"));
  if (auto failure = drawn_fault(shape, s.faults, call)) return send(res, *failure);
  if (drops(s.faults, call)) return send_headers_then_drop(res);
  if (shape == MockProfile::ollama && too_old_for_system_one(s.version)) {
    res.status = 404;  // an Ollama too old for System One: Go's plain-text not-found page
    res.set_content("404 page not found", "text/plain; charset=utf-8");
    return;
  }
  if (const std::uint64_t work = rule_work(s.rules, decoded); work > max_mock_rule_work) {
    return send(res,
                error_reply(shape, 400,
                            "clef mock: the rules for these questions would scan this " +
                                std::to_string(decoded.state_text.size()) +
                                "-byte state at a cost of " + std::to_string(work) +
                                ", over the mock's bound of " + std::to_string(max_mock_rule_work) +
                                " (rules' program sizes x state bytes): use fewer or "
                                "simpler rules, or a shorter state"));
  }
  if (s.cassette && !any_rule_covers(s.rules, decoded) &&
      replay(shape, *s.cassette, req.path, req.body, res)) {
    return;
  }
  Reply reply = simulate(shape, s, request, req.body.size(), decoded, call);
  if (reply.status == 200) {
    if (auto neurons = neurons_header(shape, req.body.size())) {
      reply.headers.push_back(*neurons);
      state.admission.bill(neurons_for(req.body.size()) * 0.011 / 1000.0);
    }
  }
  send(res, reply);
}

}  // namespace clef::mock_detail
