// The decision cache: hits, misses on any change, TTLs, a size cap, and many writers at once.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "clef/cache.hpp"

namespace {

/// Answers every request with a body derived from it, counting what reaches it.
class EchoTransport final : public clef::Transport {
 public:
  clef::Result<clef::HttpResponse> send(const clef::HttpRequest& request) override {
    ++sent;
    clef::HttpResponse response;
    response.status = status;
    response.headers = {{"content-type", "application/json"}};
    response.body = "{\"echo\":" + nlohmann::json(request.body).dump() + "}";
    return response;
  }
  std::atomic<int> sent{0};
  int status = 200;
};

std::string fresh_directory(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  (void)clef::clear_cache(path);
  return path;
}

clef::HttpRequest request_for(const std::string& body) {
  clef::HttpRequest request;
  request.url = "http://127.0.0.1:11434/v1/systemone";
  request.body = body;
  return request;
}

TEST(Cache, HitsOnlyTheSameRequestForTheSameModelVersion) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_hits");
  options.model_version = "clef-flash:latest@aaaa";
  auto cache = clef::make_caching_transport(inner, options, "ollama");
  auto first = cache->send(request_for(R"({"state":"a"})"));
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->from_cache);
  auto second = cache->send(request_for(R"({"state":"a"})"));
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->body, first->body);
  EXPECT_EQ(inner->sent.load(), 1);
  (void)cache->send(request_for(R"({"state":"b"})"));  // another body
  EXPECT_EQ(inner->sent.load(), 2);
  clef::HttpRequest elsewhere = request_for(R"({"state":"a"})");
  elsewhere.url = "http://10.0.0.2:11434/v1/systemone";  // another server
  (void)cache->send(elsewhere);
  EXPECT_EQ(inner->sent.load(), 3);
  options.model_version = "clef-flash:latest@bbbb";  // the tag moved to a new model
  auto moved = clef::make_caching_transport(inner, options, "ollama");
  EXPECT_FALSE(moved->send(request_for(R"({"state":"a"})"))->from_cache);
  EXPECT_EQ(inner->sent.load(), 4);
  auto other_backend = clef::make_caching_transport(inner, options, "systemone");
  EXPECT_FALSE(other_backend->send(request_for(R"({"state":"a"})"))->from_cache);
}

TEST(Cache, ErrorsAndImagesAreNotCached) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_errors");
  auto cache = clef::make_caching_transport(inner, options, "ollama");
  inner->status = 503;
  (void)cache->send(request_for(R"({"state":"a"})"));
  (void)cache->send(request_for(R"({"state":"a"})"));
  EXPECT_EQ(inner->sent.load(), 2) << "a 503 is never an answer";
  inner->status = 200;
  const std::string with_image = R"({"state":"a","images":["iVBORw0KGgo="]})";
  (void)cache->send(request_for(with_image));
  (void)cache->send(request_for(with_image));
  EXPECT_EQ(inner->sent.load(), 4) << "images are not cached unless asked";
  options.include_images = true;
  auto images = clef::make_caching_transport(inner, options, "ollama");
  (void)images->send(request_for(with_image));
  EXPECT_TRUE(images->send(request_for(with_image))->from_cache);
}

TEST(Cache, MovingAliasesExpireAndTornEntriesAreMisses) {
  EXPECT_TRUE(clef::is_moving_alias("clef-flash:latest"));
  EXPECT_TRUE(clef::is_moving_alias("@cf/cloudflare/clef-flash-latest"));
  EXPECT_FALSE(clef::is_moving_alias("clef-flash:9b-q4"));
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_ttl");
  options.ttl = std::chrono::seconds(600);
  auto cache = clef::make_caching_transport(inner, options, "workers-ai");
  const auto request = request_for(R"({"state":"a"})");
  (void)cache->send(request);
  const std::string key = clef::cache_key("workers-ai", request, "");
  const std::string path = options.directory + "/" + key.substr(0, 2) + "/" + key + ".json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  auto entry = nlohmann::json::parse(in);
  entry["created"] = entry["created"].get<long long>() - 601;  // written 10 minutes ago
  std::ofstream(path) << entry.dump();
  EXPECT_FALSE(cache->send(request)->from_cache) << "an alias older than its TTL is asked again";
  EXPECT_TRUE(cache->send(request)->from_cache);
  std::ofstream(path) << entry.dump().substr(0, 40);  // a torn entry
  EXPECT_FALSE(cache->send(request)->from_cache);
  EXPECT_EQ(inner->sent.load(), 3);
}

TEST(Cache, TheSizeCapEvictsTheLeastRecentlyUsed) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_cap");
  options.max_bytes = 40'000;
  auto cache = clef::make_caching_transport(inner, options, "ollama");
  const std::string padding(900, 'x');
  for (int i = 0; i < 199; ++i) {
    (void)cache->send(request_for("{\"state\":\"" + std::to_string(i) + padding + "\"}"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // past the clock's tick
  (void)cache->send(request_for("{\"state\":\"199" + padding + "\"}"));
  auto stats = clef::cache_stats(options.directory);
  ASSERT_TRUE(stats);
  // Checked every 64 writes: at most 63 entries (~2 KB each) past the last check.
  EXPECT_LE(stats->bytes, options.max_bytes + 63u * 2200u);
  auto reopened = clef::make_caching_transport(inner, options, "ollama");  // checks at start
  EXPECT_LE(clef::cache_stats(options.directory)->bytes, options.max_bytes);
  EXPECT_TRUE(reopened->send(request_for("{\"state\":\"199" + padding + "\"}"))->from_cache)
      << "the most recent entry survives";
  auto cleared = clef::clear_cache(options.directory);
  ASSERT_TRUE(cleared);
  EXPECT_GT(cleared->entries, 0u);
  EXPECT_EQ(clef::cache_stats(options.directory)->entries, 0u);
}

TEST(Cache, StatsAndClearTouchOnlyTheCachesOwnEntries) {
  // The cache lives in a directory that holds other files, beside and above its entries.
  const std::string parent = fresh_directory("cache_parent");
  ::mkdir(parent.c_str(), 0755);
  const std::string directory = parent + "/cache";
  const std::string neighbour = parent + "/report.json";
  std::ofstream(neighbour) << "{}";
  ::mkdir(directory.c_str(), 0755);
  ::mkdir((directory + "/ab").c_str(), 0755);
  std::ofstream(directory + "/ab/notes.json") << "{}";  // not KEY.json
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = directory;
  (void)clef::make_caching_transport(inner, options, "ollama")->send(request_for("{}"));
  EXPECT_EQ(clef::cache_stats(directory)->entries, 1u);
  EXPECT_EQ(clef::clear_cache(directory)->entries, 1u);
  EXPECT_TRUE(std::ifstream(neighbour).good()) << "clear never reaches the parent (\"..\")";
  EXPECT_TRUE(std::ifstream(directory + "/ab/notes.json").good());
}

TEST(Cache, ConcurrentWritersNeverCorruptAnEntry) {
  const std::string directory = fresh_directory("cache_concurrent");
  auto inner = std::make_shared<EchoTransport>();
  std::atomic<int> wrong{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&, t] {
      clef::CacheOptions options;  // each writer its own cache object, as separate processes
      options.directory = directory;
      auto cache = clef::make_caching_transport(inner, options, "ollama");
      for (int i = 0; i < 300; ++i) {
        const std::string body = "{\"state\":\"" + std::to_string((i * 7 + t) % 25) + "\"}";
        auto response = cache->send(request_for(body));
        if (!response || response->body != "{\"echo\":" + nlohmann::json(body).dump() + "}")
          ++wrong;
      }
    });
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(wrong.load(), 0);
  auto stats = clef::cache_stats(directory);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 25u) << "one entry per key, no temporary files left";
  // Every entry reads back whole.
  clef::CacheOptions options;
  options.directory = directory;
  auto cache = clef::make_caching_transport(inner, options, "ollama");
  const int before = inner->sent.load();
  for (int k = 0; k < 25; ++k) {
    EXPECT_TRUE(cache->send(request_for("{\"state\":\"" + std::to_string(k) + "\"}"))->from_cache);
  }
  EXPECT_EQ(inner->sent.load(), before);
}

}  // namespace
