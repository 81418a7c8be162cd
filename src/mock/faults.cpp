// Faults on demand: seeded draws of failures and drops, and first_attempt_faults for tests.
#include "mock/faults.hpp"

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "mock/error_bodies.hpp"

namespace clef::mock_detail {

// SplitMix64.
double unit_draw(std::uint64_t seed, int call, std::uint64_t stream) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + (static_cast<std::uint64_t>(call) << 1) + stream;
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0;
}

std::optional<Reply> drawn_fault(MockProfile shape, const MockFaults& faults, int call) {
  if (faults.quota_exhausted && shape == MockProfile::openai) {
    return error_reply(shape, 429,
                       "You exceeded your current quota, please check your plan and billing "
                       "details.",
                       "insufficient_quota");
  }
  if (faults.quota_exhausted) {
    return error_reply(shape, 429, "you have used up your daily free allocation", "4006");
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

bool drops(const MockFaults& faults, int call) {
  if (faults.drop_rate <= 0) return false;
  return unit_draw(faults.seed, call, 1) < faults.drop_rate;
}

}  // namespace clef::mock_detail

namespace clef {

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

}  // namespace clef
