// clef::MockServer, the public face of the mock: starting it, and the settings tests and flags
// change while it runs.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "clef/cassette.hpp"
#include "clef/mock.hpp"
#include "mock/profile.hpp"
#include "mock/server_state.hpp"

namespace clef {

using mock_detail::MockSettings;
using mock_detail::ServerState;

Result<MockServer> MockServer::start(MockProfile profile, int port) {
  auto state = std::make_unique<ServerState>(profile);
  auto bound = state->serve(port);
  if (!bound) return bound.error();
  MockServer server(std::move(state));
  server.m_port = *bound;
  return Result<MockServer>(std::move(server));
}

MockServer::MockServer(MockProfile profile) noexcept {
  // An ephemeral port on the loopback interface is refused only to a process out of
  // descriptors, threads or ports: nothing a test could carry on from.
  auto started = start(profile, 0);
  if (!started) {
    std::fprintf(stderr, "clef::MockServer: %s (MockServer::start reports this instead)\n",
                 started.error().message.c_str());
    std::abort();
  }
  *this = std::move(started).value();
}

MockServer::MockServer(std::unique_ptr<ServerState> state) noexcept : m_state(std::move(state)) {}

MockServer::MockServer(MockServer&& other) noexcept = default;
MockServer& MockServer::operator=(MockServer&& other) noexcept = default;
MockServer::~MockServer() = default;

void MockServer::set_latency(std::chrono::milliseconds latency) {
  m_state->latency_ms = latency.count();
}

void MockServer::set_models(std::vector<std::string> models) {
  m_state->settings.change([&](MockSettings& s) { s.models = std::move(models); });
}

void MockServer::set_model_digest(const std::string& name, std::string digest) {
  m_state->settings.change(
      [&](MockSettings& s) { s.digests[mock_detail::ollama_name(name)] = std::move(digest); });
}

void MockServer::set_faults(MockFaults faults) {
  m_state->settings.change([&](MockSettings& s) { s.faults = std::move(faults); });
}

Status MockServer::set_token(std::optional<std::string> token) {
  if (token && m_state->profile != MockProfile::workers_ai &&
      m_state->profile != MockProfile::openai) {
    return make_error(ErrorKind::invalid_input,
                      "only the Workers AI and OpenAI profiles check a token", "token");
  }
  if (token && token->find_first_not_of(" \t") == std::string::npos) {
    return make_error(ErrorKind::invalid_input, "the token is empty", "token");
  }
  m_state->settings.change([&](MockSettings& s) { s.token = std::move(token); });
  return {};
}

Status MockServer::set_cassette(const std::string& path) {
  auto replay = make_replay_transport(path, cassette_tag(m_state->profile));
  if (!replay) return replay.error();
  m_state->settings.change([&](MockSettings& s) { s.cassette = std::move(replay).value(); });
  return {};
}

Status MockServer::set_log(const std::string& path) {
  if (!m_state->log.open_file(path)) {
    return make_error(ErrorKind::invalid_input,
                      "cannot open " + path + " to append to it: " + std::strerror(errno));
  }
  return {};
}

void MockServer::set_rules(std::vector<MockRule> rules) {
  m_state->settings.change([&](MockSettings& s) { s.rules = std::move(rules); });
}

void MockServer::set_script(
    std::function<std::optional<MockReply>(const MockRequest&, int)> script) {
  m_state->settings.change([&](MockSettings& s) { s.script = std::move(script); });
}

void MockServer::set_version(std::string version) {
  m_state->settings.change([&](MockSettings& s) { s.version = std::move(version); });
}

void MockServer::set_gateway(std::string name) {
  m_state->settings.change([&](MockSettings& s) { s.gateway = std::move(name); });
}

void MockServer::set_gateway_token(std::optional<std::string> token) {
  m_state->settings.change([&](MockSettings& s) { s.gateway_token = std::move(token); });
}

std::vector<MockRequest> MockServer::requests() const {
  return m_state->log.requests();
}

void MockServer::set_request_log_limit(std::size_t requests) {
  m_state->log.set_limit(requests);
}

int MockServer::request_count() const {
  return m_state->calls.load();
}

void MockServer::set_request_deadline(std::chrono::milliseconds deadline) {
  m_state->http.set_request_deadline(deadline);
}

void MockServer::set_max_connections(std::size_t connections) {
  m_state->http.set_max_connections(std::max<std::size_t>(connections, 1));
}

}  // namespace clef
