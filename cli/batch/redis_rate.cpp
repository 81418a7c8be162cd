// The implementation of redis_rate.hpp, on hiredis (Debian's libhiredis-dev): a blocking
// context with short timeouts, since each start waits for its answer.
#include "batch/redis_rate.hpp"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

/// GCRA: the bucket holds the theoretical arrival time (TAT, µs of Redis' own clock, so every
/// machine agrees). A start is allowed once now >= TAT - tolerance; it moves TAT on by one
/// interval. Refused, it returns how long until it would be allowed and changes nothing.
constexpr const char* kGcraScript = R"lua(
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000000 + tonumber(now_parts[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local allowed_at = tat - tolerance
if now < allowed_at then return allowed_at - now end
local next_tat = tat + interval
redis.call('SET', KEYS[1], next_tat, 'PX', math.ceil((next_tat - now) / 1000) + 1000)
return 0
)lua";

/// How long a Redis call may take before the shard goes on alone, and how long it then goes on
/// alone before it tries Redis again.
constexpr std::chrono::milliseconds kConnectTimeout{1000};
constexpr std::chrono::milliseconds kCallTimeout{250};
constexpr std::chrono::seconds kRetryEvery{2};

/// hiredis (0.14) makes an array reply's room for as many elements as its header announces
/// before one arrives: "*2147483647" took 16 GiB and the shard hung. No answer of the script's
/// (nor of AUTH or SCRIPT LOAD) is an array of more than a few.
constexpr int kMostElements = 16;
thread_local bool t_array_refused = false;
void* (*hiredis_create_array)(const redisReadTask*, int) = nullptr;  // set once, then read

void* bounded_array(const redisReadTask* task, int elements) {
  if (elements > kMostElements) {
    t_array_refused = true;
    return nullptr;  // hiredis fails the reply ("Out of memory"): said as what it was, below
  }
  return hiredis_create_array(task, elements);
}

/// The reader's functions with bounded_array in place of hiredis' own array maker.
redisReplyObjectFunctions* bounded_functions(const redisReplyObjectFunctions* defaults) {
  static redisReplyObjectFunctions bounded = [defaults] {
    redisReplyObjectFunctions functions = *defaults;
    hiredis_create_array = functions.createArray;
    functions.createArray = bounded_array;
    return functions;
  }();
  return &bounded;
}

timeval as_timeval(std::chrono::milliseconds value) {
  timeval out{};
  out.tv_sec = static_cast<time_t>(value.count() / 1000);
  out.tv_usec = static_cast<suseconds_t>((value.count() % 1000) * 1000);
  return out;
}

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

Error store_error(const std::string& message) {
  return make_error(ErrorKind::invalid_input, message, "--rate-store");
}

}  // namespace

Result<RedisAddress> parse_rate_store(const std::string& url) {
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0 || url.size() > 2048)
    return store_error("a Redis URL, redis://HOST:PORT/KEY");
  const std::string rest = url.substr(scheme.size());
  const auto slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  RedisAddress address;
  address.key = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (authority.find('@') != std::string::npos)
    return store_error(
        "no user or password in the URL (a process argument anyone can read): "
        "REDISCLI_AUTH gives the password");
  if (address.key.empty())
    return store_error(
        "the bucket's key after the port, redis://HOST:PORT/KEY (every shard of "
        "the run names the same)");
  for (unsigned char c : url)
    if (c <= 0x20 || c >= 0x7f) return store_error("printable ASCII, no spaces");
  // A query or fragment (?password=..., #...) is no part of a key anyone means.
  if (address.key.find_first_of("?#") != std::string::npos)
    return store_error(
        "a key without ? or # (no query: REDISCLI_AUTH gives the password), "
        "redis://HOST:PORT/KEY");
  // An IPv6 address in brackets, as in any URL: [::1]:6379.
  const auto close = authority.rfind(']');
  const bool bracketed = !authority.empty() && authority.front() == '[';
  if (bracketed != (close != std::string::npos) ||
      (bracketed && close + 1 < authority.size() && authority[close + 1] != ':'))
    return store_error("an IPv6 address in brackets, redis://[::1]:PORT/KEY");
  const auto colon = authority.find(':', bracketed ? close : 0);
  address.host = bracketed ? authority.substr(1, close - 1) : authority.substr(0, colon);
  if (!bracketed && authority.find(':', colon + 1) != std::string::npos)
    return store_error("an IPv6 address in brackets, redis://[::1]:PORT/KEY");
  if (colon != std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    // Digits only (strtol also took "+1" and " 1"); past five, no port.
    const bool digits = !port.empty() && port.size() <= 5 &&
                        port.find_first_not_of("0123456789") == std::string::npos;
    const long value = digits ? std::strtol(port.c_str(), nullptr, 10) : 0;
    if (value < 1 || value > 65535) return store_error("a port from 1 to 65535");
    address.port = static_cast<int>(value);
  }
  if (address.host.empty()) return store_error("a host, redis://HOST:PORT/KEY");
  return address;
}

RedisRate::RedisRate(RedisAddress address, double total, double fallback,
                     std::function<void(const std::string&)> warn)
    : m_address(std::move(address)),
      m_interval_us(std::max(1LL, std::llround(1e6 / total))),
      m_fallback_interval(std::chrono::nanoseconds(std::llround(1e9 / fallback))),
      m_warn(std::move(warn)) {}

RedisRate::~RedisRate() {
  disconnect();
}

void RedisRate::disconnect() {
  if (m_redis) redisFree(m_redis);
  m_redis = nullptr;
}

bool RedisRate::connect() {
  const timeval connect_timeout = as_timeval(kConnectTimeout);
  m_redis = redisConnectWithTimeout(m_address.host.c_str(), m_address.port, connect_timeout);
  if (m_redis == nullptr || m_redis->err) {
    m_last_error = m_redis ? m_redis->errstr : "cannot connect";
    return false;
  }
  m_redis->reader->fn = bounded_functions(m_redis->reader->fn);
  const timeval call_timeout = as_timeval(kCallTimeout);
  if (redisSetTimeout(m_redis, call_timeout) != REDIS_OK) return false;
  if (const char* password = std::getenv("REDISCLI_AUTH"); password && *password) {
    Reply auth(static_cast<redisReply*>(redisCommand(m_redis, "AUTH %s", password)));
    if (!auth || auth->type == REDIS_REPLY_ERROR) return failed(auth.get());
  }
  return load_script();
}

bool RedisRate::load_script() {
  Reply loaded(static_cast<redisReply*>(redisCommand(m_redis, "SCRIPT LOAD %s", kGcraScript)));
  if (!loaded || loaded->type != REDIS_REPLY_STRING) return failed(loaded.get());
  m_script_sha.assign(loaded->str, loaded->len);
  return true;
}

bool RedisRate::failed(const redisReply* reply) {
  if (std::exchange(t_array_refused, false))
    m_last_error = "an answer that is not the script's: an array of more than " +
                   std::to_string(kMostElements) + " elements";
  else if (reply && reply->type == REDIS_REPLY_ERROR)
    m_last_error.assign(reply->str, std::min<std::size_t>(reply->len, 200));
  else if (m_redis && m_redis->err == REDIS_ERR_IO &&
           std::strcmp(m_redis->errstr, std::strerror(EAGAIN)) == 0)  // the call's timeout
    m_last_error = "no answer within " + std::to_string(kCallTimeout.count()) + " ms";
  else if (m_redis && m_redis->err)
    m_last_error = m_redis->errstr;
  else
    m_last_error = "an answer that is not the script's";
  return false;
}

std::optional<long long> RedisRate::ask_redis() {
  if (!m_redis && !connect()) {
    disconnect();
    return std::nullopt;
  }
  const std::string interval = std::to_string(m_interval_us);
  const std::string tolerance = std::to_string(m_interval_us);  // at most two starts together
  for (int attempt = 0; attempt < 2; ++attempt) {
    Reply reply(static_cast<redisReply*>(redisCommand(m_redis, "EVALSHA %s 1 %s %s %s",
                                                      m_script_sha.c_str(), m_address.key.c_str(),
                                                      interval.c_str(), tolerance.c_str())));
    // The script waits at most one interval (its tolerance is one): a longer wait, a day or
    // INT64_MAX µs (which overflowed to a wait of none: no rate at all), is not its answer.
    if (reply && reply->type == REDIS_REPLY_INTEGER && reply->integer >= 0 &&
        reply->integer <= 2 * m_interval_us)
      return reply->integer;
    // Redis restarted or flushed its scripts: load it again and ask once more.
    const bool no_script = reply && reply->type == REDIS_REPLY_ERROR &&
                           std::string(reply->str, reply->len).rfind("NOSCRIPT", 0) == 0;
    failed(reply.get());
    if (!no_script || attempt > 0 || !load_script()) break;
  }
  disconnect();  // a broken connection, or a key that is not the bucket's: connect again later
  return std::nullopt;
}

std::chrono::nanoseconds RedisRate::take_locally(Clock::time_point now) {
  if (now < m_local_next) return m_local_next - now;
  m_local_next = std::max(m_local_next, now) + m_fallback_interval;
  return std::chrono::nanoseconds(0);
}

std::chrono::nanoseconds RedisRate::take() {
  std::lock_guard<std::mutex> lock(m_mutex);
  const Clock::time_point now = Clock::now();
  if (m_falling_back && now < m_try_again) return take_locally(now);
  const std::optional<long long> wait = ask_redis();
  if (!wait) {
    if (!m_falling_back && m_warn) {
      const bool ipv6 = m_address.host.find(':') != std::string::npos;
      const std::string host = ipv6 ? "[" + m_address.host + "]" : m_address.host;
      m_warn("clef: warning: the shared rate at redis://" + terminal_safe(host) + ":" +
             std::to_string(m_address.port) + " cannot be used (" + terminal_safe(m_last_error) +
             "): this shard goes on at its share, one request every " +
             std::to_string(std::chrono::duration<double>(m_fallback_interval).count()) +
             " s, and tries Redis again every 2 s\n");
    }
    m_falling_back = true;
    m_try_again = now + kRetryEvery;
    return take_locally(now);
  }
  if (m_falling_back && m_warn)
    m_warn("clef: the shared rate in Redis answers again: this shard shares it from here on\n");
  m_falling_back = false;
  return std::chrono::microseconds(*wait);  // 0: taken
}

}  // namespace clef::cli
