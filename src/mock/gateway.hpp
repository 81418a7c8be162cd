// Internal: Cloudflare AI Gateway in front of the mock's Workers AI (the workers-ai profile's
// second URL form, …/v1/ACCOUNT/GATEWAY/workers-ai/MODEL): the gateway's own cache
// (cf-aig-cache-ttl, cf-aig-skip-cache, cf-aig-cache-status), its log id, and its error for a
// gateway the account does not have.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <httplib.h>

namespace clef::mock_detail {

struct ServerState;

/// What the gateway has cached: the answer's body by model path and request body, until when.
/// (An answer from it never reaches the Workers AI behind: it is not in the request log.)
class GatewayCache {
 public:
  /// A number for the next request through the gateway (its log id).
  int next_request() { return m_requests.fetch_add(1); }
  std::optional<std::string> find(const std::string& key);
  void store(const std::string& key, std::string body, std::chrono::seconds ttl);

 private:
  struct Entry {
    std::string body;
    std::chrono::steady_clock::time_point until;
  };
  std::atomic<int> m_requests{0};
  std::mutex m_mutex;
  std::map<std::string, Entry> m_entries;
};

/// A decision through the gateway route: req.matches[2] is the gateway's name, [3] the model.
void serve_gateway(ServerState& state, const httplib::Request& req, httplib::Response& res);

}  // namespace clef::mock_detail
