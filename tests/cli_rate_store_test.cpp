// clef batch --rate-store: shards on one budget kept in a real redis-server on 127.0.0.1, started
// at different moments, and going on at their share when Redis goes away.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "batch/redis_rate.hpp"
#include "clef/batch.hpp"
#include "support/child_clef.hpp"
#include "support/cli_runner.hpp"
#include "support/fake_server.hpp"
#include "support/local_service.hpp"
#include "support/silent_listener.hpp"
#include "support/wait_until.hpp"

using namespace clef::testing;
using Json = nlohmann::ordered_json;

namespace {

/// `per_shard` ids in each of `shards` shards (by clef's own hash), as JSONL.
std::string even_shards(int shards, int per_shard) {
  std::string text;
  std::vector<int> count(static_cast<std::size_t>(shards));
  for (int i = 0, total = 0; total < shards * per_shard; ++i) {
    const std::string id = "T" + std::to_string(i);
    const std::size_t shard = clef::shard_of(Json(id).dump(), static_cast<std::size_t>(shards));
    if (count[shard] == per_shard) continue;
    ++count[shard];
    ++total;
    text +=
        Json({{"id", id}, {"state", {{"ticket", "ticket number " + std::to_string(i)}}}}).dump() +
        "\n";
  }
  return text;
}

/// A mock with a token bucket of `rate` a second that notes when each decision arrives.
struct Bucket {
  std::mutex mutex;
  std::vector<std::chrono::steady_clock::time_point> arrivals;
  FakeServer server;  // last: stopped before what its handler writes to is destroyed

  explicit Bucket(double rate) {
    clef::MockFaults faults;
    faults.rate_limit = rate;
    server.set_faults(faults);
    server.set_script([this](const clef::MockRequest&, int) -> std::optional<clef::MockReply> {
      std::lock_guard<std::mutex> lock(mutex);
      arrivals.push_back(std::chrono::steady_clock::now());
      return std::nullopt;  // the simulated server answers, its bucket deciding
    });
  }
  std::size_t arrived() {
    std::lock_guard<std::mutex> lock(mutex);
    return arrivals.size();
  }
  /// Decisions a second from half a second after the first to half a second before the last.
  double steady_rate() {
    std::lock_guard<std::mutex> lock(mutex);
    std::sort(arrivals.begin(), arrivals.end());
    const auto from = arrivals.front() + std::chrono::milliseconds(500);
    const auto to = arrivals.back() - std::chrono::milliseconds(500);
    const auto in_window = std::count_if(arrivals.begin(), arrivals.end(),
                                         [&](auto t) { return t >= from && t <= to; });
    return static_cast<double>(in_window) / std::chrono::duration<double>(to - from).count();
  }
};

std::unique_ptr<LocalService> start_redis(const std::string& log) {
  return std::make_unique<LocalService>(
      installed_program("redis-server"),
      std::vector<std::string>{"--port", "{port}", "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"},
      log);
}

/// A "Redis" on 127.0.0.1 that loads the script as Redis would and answers every EVALSHA with
/// `reply`: a store that lies, which no redis-server can be made to.
class LyingRedis {
 public:
  explicit LyingRedis(std::string reply) : m_reply(std::move(reply)) {
    m_listener = listen_on_loopback(m_port);
    m_thread = std::thread([this] { serve(); });
  }
  ~LyingRedis() {
    m_stop = true;
    m_thread.join();
    ::close(m_listener);
  }
  int port() const { return m_port; }

 private:
  void serve() {
    while (!m_stop) {
      pollfd ready{m_listener, POLLIN, 0};
      if (::poll(&ready, 1, 50) != 1) continue;
      const int connection = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) continue;
      for (char buffer[4096]; !m_stop;) {
        pollfd readable{connection, POLLIN, 0};
        if (::poll(&readable, 1, 50) != 1) continue;
        const ssize_t got = ::recv(connection, buffer, sizeof buffer, 0);
        if (got <= 0) break;
        const std::string command(buffer, static_cast<std::size_t>(got));
        const std::string answer =
            command.find("SCRIPT") != std::string::npos
                ? "$40\r\n" + std::string(40, 'a') + "\r\n"
                : (command.find("EVALSHA") != std::string::npos ? m_reply : "+OK\r\n");
        (void)::send(connection, answer.data(), answer.size(), MSG_NOSIGNAL);
      }
      ::close(connection);
    }
  }
  std::string m_reply;
  int m_listener = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

}  // namespace

// A store that answers what the script never would: a wait of a day (the shard waited it out,
// silent), INT64_MAX µs (it overflowed to no wait: no rate at all), an array announcing 2^31
// elements (hiredis made room for them all: 16 GiB, and a hang); and silence, which was said as
// "Resource temporarily unavailable". Each is a store that cannot be used: said once, and the
// shard goes on at its share (R/N: 50 a second here).
TEST(CliRateStore, AStoreThatLiesIsNotBelievedAndTheShardGoesOnAtItsShare) {
  FakeServer server;
  const std::string input = write_temp_file("rate_store_lies.jsonl", even_shards(2, 15));
  const std::string not_its = "an answer that is not the script's";
  for (const auto& [lie, reason] :
       std::vector<std::pair<std::string, std::string>>{{":86400000000\r\n", not_its},
                                                        {":9223372036854775807\r\n", not_its},
                                                        {"*2147483647\r\n:1\r\n", not_its},
                                                        {"", "no answer within 250 ms"}}) {
    LyingRedis redis(lie);
    const std::string store = "redis://127.0.0.1:" + std::to_string(redis.port()) + "/k";
    const auto r = run_clef_child(
        batch_args(server.base_url(), input, fresh_path("rate_lies"),
                   {"--shard", "0/2", "--rate-total", "100", "--rate-store", store, "--overwrite"}),
        std::chrono::seconds(30));
    ASSERT_TRUE(r.finished) << "still running after 30 s: " << lie;
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("cannot be used (" + reason), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("15 written, 15 ok"), std::string::npos) << r.err;
    // 15 starts at 50 a second (two may go together): not all at once.
    EXPECT_GE(r.elapsed, std::chrono::milliseconds(200)) << "no rate at all: " << lie;
    EXPECT_LT(r.max_rss_kb, 200 * 1024) << "memory for what the header announced: " << lie;
  }
}

TEST(CliRateStore, ShardsStartedAtDifferentMomentsShareOneBudgetInRedis) {
  if (installed_program("redis-server").empty())
    GTEST_SKIP() << "no redis-server (the Debian package; .ci/run installs it)";
  const std::string log = fresh_path("redis_shared.log");
  auto redis = start_redis(log);
  ASSERT_TRUE(redis->ready()) << read_file(log);
  Bucket bucket(40);
  const std::string input = write_temp_file("rate_store.jsonl", even_shards(4, 30));
  const std::string store = "redis://127.0.0.1:" + std::to_string(redis->port()) + "/clef:test";
  std::vector<pid_t> children;
  for (int k = 0; k < 4; ++k) {
    // Each shard starts once the one before it has sent ten: shard 0 alone has the whole budget
    // at first, then shares it with each newcomer.
    if (k > 0)
      wait_until([&] { return bucket.arrived() >= 10u * static_cast<std::size_t>(k); },
                 "shard " + std::to_string(k - 1) + " under way");
    children.push_back(spawn_clef(batch_args(bucket.server.base_url(), input,
                                             fresh_path("rate_store." + std::to_string(k)),
                                             {"--shard", std::to_string(k) + "/4", "--rate-total",
                                              "40", "--rate-store", store, "-j", "4"})));
  }
  for (pid_t child : children) EXPECT_EQ(wait_for_exit(child), 0);
  const int refused = bucket.server.request_count() - 120;
  EXPECT_LT(refused, 6) << refused << " of " << bucket.server.request_count() << " refused";
  const double rate = bucket.steady_rate();
  EXPECT_GE(rate, 0.95 * 40);
  EXPECT_LE(rate, 1.05 * 40 + 1);
  std::size_t written = 0;
  for (int k = 0; k < 4; ++k)
    written += lines_of(read_file(::testing::TempDir() + "rate_store." + std::to_string(k))).size();
  EXPECT_EQ(written, 120u);
}

TEST(CliRateStore, WithRedisGoneTheShardsGoOnAtTheirShareAndSaySo) {
  if (installed_program("redis-server").empty())
    GTEST_SKIP() << "no redis-server (the Debian package; .ci/run installs it)";
  const std::string log = fresh_path("redis_gone.log");
  auto redis = start_redis(log);
  ASSERT_TRUE(redis->ready()) << read_file(log);
  Bucket bucket(20);
  const std::string input = write_temp_file("rate_store_gone.jsonl", even_shards(2, 40));
  const std::string store = "redis://127.0.0.1:" + std::to_string(redis->port()) + "/clef:gone";
  std::vector<pid_t> children;
  std::vector<std::string> errors;
  for (int k = 0; k < 2; ++k) {
    errors.push_back(fresh_path("rate_store_gone.err." + std::to_string(k)));
    children.push_back(spawn_clef(batch_args(bucket.server.base_url(), input,
                                             fresh_path("rate_store_gone." + std::to_string(k)),
                                             {"--shard", std::to_string(k) + "/2", "--rate-total",
                                              "20", "--rate-store", store, "-j", "2"}),
                                  "", errors.back()));
  }
  wait_until([&] { return bucket.arrived() >= 10u; }, "the shards under way");
  redis->stop();
  for (pid_t child : children) EXPECT_EQ(wait_for_exit(child), 0);
  for (int k = 0; k < 2; ++k) {
    const std::string err = read_file(errors[static_cast<std::size_t>(k)]);
    EXPECT_NE(err.find("): this shard goes on at its share, one request every 0.1"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("40 written, 40 ok"), std::string::npos) << err;
    EXPECT_EQ(
        lines_of(read_file(::testing::TempDir() + "rate_store_gone." + std::to_string(k))).size(),
        40u);
  }
  // R/N each: together within the bucket, so (almost) nothing refused.
  const int refused = bucket.server.request_count() - 80;
  EXPECT_LT(refused, 4) << refused << " of " << bucket.server.request_count() << " refused";
}

TEST(CliRateStore, AnIPv6HostIsWrittenInBrackets) {
  // Read only: the suite listens on 127.0.0.1 alone, so no Redis on [::1] is asked here.
  const auto v6 = clef::cli::parse_rate_store("redis://[::1]:7000/k");
  ASSERT_TRUE(v6) << v6.error().to_string();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 7000);
  EXPECT_EQ(v6->key, "k");
  const auto v6_default = clef::cli::parse_rate_store("redis://[fe80::1]/k");
  ASSERT_TRUE(v6_default) << v6_default.error().to_string();
  EXPECT_EQ(v6_default->host, "fe80::1");
  EXPECT_EQ(v6_default->port, 6379);
  const auto v4 = clef::cli::parse_rate_store("redis://127.0.0.1:6380/a:b");
  ASSERT_TRUE(v4) << v4.error().to_string();
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 6380);
  EXPECT_EQ(v4->key, "a:b");
  for (const char* url : {"redis://::1:6379/k", "redis://[::1/k", "redis://::1]/k",
                          "redis://[::1]x:1/k", "redis://[]:1/k"}) {
    const auto refused = clef::cli::parse_rate_store(url);
    EXPECT_FALSE(refused) << url;
  }
}

TEST(CliRateStore, ABadStoreIsRefusedBeforeAnythingIsSent) {
  FakeServer server;
  const std::string input = write_temp_file("rate_store_bad.jsonl", jsonl_tickets(4));
  for (const auto& [flags, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--shard", "0/2", "--rate-store", "redis://127.0.0.1:6379/k"}, "give --rate-total"},
           {{"--shard", "0/2", "--rate-total", "5", "--rate-store", "http://127.0.0.1/k"},
            "redis://HOST:PORT/KEY"},
           {{"--shard", "0/2", "--rate-total", "5", "--rate-store", "redis://127.0.0.1:6379"},
            "the bucket's key"},
           {{"--shard", "0/2", "--rate-total", "5", "--rate-store", "redis://u:pw@127.0.0.1/k"},
            "REDISCLI_AUTH"},
           {{"--shard", "0/2", "--rate-total", "5", "--rate-store", "redis://127.0.0.1:0/k"},
            "a port from 1 to 65535"},
           {{"--shard", "0/2", "--rate-total", "5", "--rate-store", "redis://127.0.0.1:+1/k"},
            "a port from 1 to 65535"},
           {{"--shard", "0/2", "--rate-total", "5", "--rate-store",
             "redis://127.0.0.1:6379/k?password=x"},
            "a key without ? or #"}}) {
    auto r = run_clef(batch_args(server.base_url(), input, fresh_path("rate_store_bad"), flags));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  EXPECT_EQ(server.requests().size(), 0u);
}
