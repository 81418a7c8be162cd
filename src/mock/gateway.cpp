// The implementation of gateway.hpp: AI Gateway's behaviour in front of the mock's Workers AI.
#include "mock/gateway.hpp"

#include <cstdio>
#include <cstdlib>

#include "mock/decision_route.hpp"
#include "mock/reply.hpp"
#include "mock/server_state.hpp"

namespace clef::mock_detail {
namespace {

// The gateway keeps at most this many answers; past it, one (the first by key) makes room.
constexpr std::size_t max_cached_answers = 10000;

/// cf-aig-cache-ttl in seconds, or 0 when absent or not a whole number in the gateway's range.
long long cache_ttl(const httplib::Request& req) {
  const std::string value = req.get_header_value("cf-aig-cache-ttl");
  if (value.empty() || value.size() > 8 ||
      value.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  const long long seconds = std::atoll(value.c_str());
  return seconds >= 60 && seconds <= 30LL * 24 * 3600 ? seconds : 0;
}

/// A log id shaped like the gateway's (26 characters, ULID-like), unique per request.
std::string log_id(int call) {
  char id[32];
  std::snprintf(id, sizeof id, "01JMOCK%019d", call);
  return id;
}

/// AI Gateway's own error envelope: {"success": false, "result": [], "messages": [], "error":
/// [{code, message}]}.
Reply gateway_error(int status, int code, const char* message) {
  Reply reply;
  reply.status = status;
  reply.body = Json::object();
  reply.body["success"] = false;
  reply.body["result"] = Json::array();
  reply.body["messages"] = Json::array();
  reply.body["error"] = Json::array();
  reply.body["error"].push_back({{"code", code}, {"message", message}});
  return reply;
}

/// The gateway's answer for a name the account has no gateway of.
Reply not_configured() {
  return gateway_error(400, 2001, "Please configure AI Gateway in the Cloudflare dashboard");
}

/// An Authenticated Gateway's answer to a request without its token. The code is the one
/// Cloudflare's changelog gives the gateway's 401 (2009); the message is the mock's.
Reply unauthorized() {
  return gateway_error(401, 2009, "Unauthorized");
}

}  // namespace

std::optional<std::string> GatewayCache::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(m_mutex);
  const auto it = m_entries.find(key);
  if (it == m_entries.end()) return std::nullopt;
  if (it->second.until <= std::chrono::steady_clock::now()) {
    m_entries.erase(it);
    return std::nullopt;
  }
  return it->second.body;
}

void GatewayCache::store(const std::string& key, std::string body, std::chrono::seconds ttl) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_entries.size() >= max_cached_answers) m_entries.erase(m_entries.begin());
  m_entries[key] = Entry{std::move(body), std::chrono::steady_clock::now() + ttl};
}

void serve_gateway(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  res.set_header("cf-aig-log-id", log_id(state.gateway_cache.next_request()));
  const auto settings = state.settings.snapshot();
  if (req.matches.size() < 4 || req.matches[2].str() != settings->gateway) {
    return send(res, not_configured());
  }
  if (settings->gateway_token &&
      req.get_header_value("cf-aig-authorization") != "Bearer " + *settings->gateway_token) {
    return send(res, unauthorized());
  }
  const long long ttl = cache_ttl(req);
  const bool skip = req.get_header_value("cf-aig-skip-cache") == "true";
  // As AI Gateway keys its cache: the endpoint (account, gateway, model), the provider's
  // Authorization header and the body — another account or token never gets this answer.
  const std::string key = req.path + "\n" + req.get_header_value("Authorization") + "\n" + req.body;
  if (ttl > 0 && !skip) {
    if (auto cached = state.gateway_cache.find(key)) {
      res.status = 200;
      res.set_header("cf-aig-cache-status", "HIT");
      res.set_content(*cached, "application/json");
      return;
    }
  }
  serve_decision(state, req, res);
  res.set_header("cf-aig-cache-status", "MISS");
  if (ttl > 0 && !skip && res.status == 200 && !res.body.empty()) {
    state.gateway_cache.store(key, res.body, std::chrono::seconds(ttl));
  }
}

}  // namespace clef::mock_detail
