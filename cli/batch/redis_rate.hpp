// --rate-store redis://HOST:PORT/KEY: one budget of requests per second for every shard of a run,
// on any machine, kept in Redis as a GCRA token bucket (one atomic script per start), and this
// shard's share of it (R/N) when Redis cannot be reached.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "clef/batch.hpp"
#include "clef/result.hpp"

struct redisContext;
struct redisReply;

namespace clef::cli {

struct RedisAddress {
  std::string host;
  int port = 6379;
  std::string key;  ///< The bucket's key: every shard of one run names the same.
};

/// redis://HOST[:PORT]/KEY, an IPv6 HOST in brackets ([::1]); refused (naming --rate-store):
/// another scheme, a user or password in the URL (REDISCLI_AUTH gives the password), no key, a
/// port outside 1..65535, an IPv6 address without brackets.
Result<RedisAddress> parse_rate_store(const std::string& url);

class RedisRate final : public SharedRate {
 public:
  /// `total`: the requests per second every process shares (--rate-total); `fallback`: this
  /// process's own pace while Redis is away (R/N for shard K/N). `warn` is told each change
  /// between the two, from the thread that asked.
  RedisRate(RedisAddress address, double total, double fallback,
            std::function<void(const std::string&)> warn);
  RedisRate(const RedisRate&) = delete;
  RedisRate& operator=(const RedisRate&) = delete;
  ~RedisRate() override;

  std::chrono::nanoseconds take() override;

 private:
  using Clock = std::chrono::steady_clock;
  bool connect();
  bool load_script();
  /// Notes why Redis failed (its error, or the connection's) for the warning; false.
  bool failed(const redisReply* reply);
  void disconnect();
  /// The script's answer: 0 (taken) or microseconds to wait; nullopt when Redis failed.
  std::optional<long long> ask_redis();
  std::chrono::nanoseconds take_locally(Clock::time_point now);

  RedisAddress m_address;
  long long m_interval_us;
  std::chrono::nanoseconds m_fallback_interval;
  std::function<void(const std::string&)> m_warn;
  std::mutex m_mutex;
  redisContext* m_redis = nullptr;
  std::string m_script_sha;
  std::string m_last_error;
  bool m_falling_back = false;
  Clock::time_point m_try_again{};  ///< While falling back: when to try Redis again.
  Clock::time_point m_local_next{};
};

}  // namespace clef::cli
