// The decision cache: hits, misses on any change, TTLs, a size cap, and many writers at once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "clef/cache.hpp"
#include "clef/mock.hpp"

namespace {

using namespace std::chrono_literals;

/// Answers every request with a valid decision for its one question ("refund"), carrying the
/// request's body so a test can tell answers apart; counts what reaches it.
class EchoTransport final : public clef::Transport {
 public:
  clef::Result<clef::HttpResponse> send(const clef::HttpRequest& request) override {
    ++sent;
    clef::HttpResponse response;
    response.status = status;
    response.headers = {{"content-type", "application/json"}};
    response.body = body.empty() ? R"({"model":"clef-flash","answers":{"refund":{"type":"noul",)"
                                   R"("noul":0.9}},"echo":)" +
                                       nlohmann::json(request.body).dump() + "}"
                                 : body;
    return response;
  }
  std::atomic<int> sent{0};
  int status = 200;
  std::string body;  ///< When set, the body of every answer.
};

std::string fresh_directory(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  std::filesystem::remove_all(path);
  return path;
}

/// A decision request body as clef writes it: one yes/no question, "refund".
std::string decision_body(const std::string& state) {
  return R"({"model":"clef-flash","state":)" + nlohmann::json(state).dump() +
         R"(,"questions":{"refund":{"type":"noul","instructions":"Money back?"}}})";
}

clef::HttpRequest request_for(const std::string& state) {
  clef::HttpRequest request;
  request.url = "http://127.0.0.1:11434/v1/systemone";
  request.body = decision_body(state);
  return request;
}

std::shared_ptr<clef::Transport> caching(std::shared_ptr<clef::Transport> inner,
                                         const clef::CacheOptions& options,
                                         clef::Backend backend = clef::Backend::ollama) {
  auto cache = clef::make_caching_transport(std::move(inner), options, backend);
  EXPECT_TRUE(cache) << cache.error().to_string();
  return cache ? cache.value() : nullptr;
}

std::string entry_path(const clef::CacheOptions& options, const clef::HttpRequest& request,
                       const char* tag = "ollama") {
  const std::string key = clef::cache_key(tag, request, options.model_version);
  return options.directory + "/" + key.substr(0, 2) + "/" + key + ".json";
}

/// What the cache's files take on disk, counted here independently of cache_stats.
std::uint64_t disk_usage(const std::string& directory) {
  std::uint64_t total = 0;
  for (const auto& item : std::filesystem::recursive_directory_iterator(directory)) {
    struct stat info {};
    if (::lstat(item.path().c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
      total += static_cast<std::uint64_t>(info.st_blocks) * 512u;
    }
  }
  return total;
}

TEST(Cache, HitsOnlyTheSameRequestForTheSameModelVersion) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_hits");
  options.model_version = "clef-flash:latest@aaaa";
  auto cache = caching(inner, options);
  auto first = cache->send(request_for("a"));
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->from_cache);
  auto second = cache->send(request_for("a"));
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->body, first->body);
  EXPECT_EQ(inner->sent.load(), 1);
  (void)cache->send(request_for("b"));  // another body
  EXPECT_EQ(inner->sent.load(), 2);
  clef::HttpRequest elsewhere = request_for("a");
  elsewhere.url = "http://10.0.0.2:11434/v1/systemone";  // another server
  (void)cache->send(elsewhere);
  EXPECT_EQ(inner->sent.load(), 3);
  options.model_version = "clef-flash:latest@bbbb";  // the tag moved to a new model
  auto moved = caching(inner, options);
  EXPECT_FALSE(moved->send(request_for("a"))->from_cache);
  EXPECT_EQ(inner->sent.load(), 4);
  auto other_backend = caching(inner, options, clef::Backend::systemone);
  EXPECT_FALSE(other_backend->send(request_for("a"))->from_cache);
}

TEST(Cache, AnEntryKeepsNoCredentialTheServerEchoed) {
  // A server that writes the request's tokens into its answer: the entry outlives the tokens,
  // and another user may share the directory.
  auto inner = std::make_shared<EchoTransport>();
  inner->body = R"({"model":"m-WKTOKEN-qq42","answers":{"refund":{"type":"noul","noul":0.9}},)"
                R"("note":"gateway GWTOKEN-zz91"})";
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_credentials");
  options.model_version = "clef-flash:latest@aaaa";
  options.validation.require_asked_model = false;  // the echoed model is not the one asked
  auto cache = caching(inner, options);
  clef::HttpRequest request = request_for("a");
  request.headers = {{"Authorization", "Bearer WKTOKEN-qq42"},
                     {"cf-aig-authorization", "Bearer GWTOKEN-zz91"}};
  ASSERT_TRUE(cache->send(request));
  std::ifstream file(entry_path(options, request), std::ios::binary);
  const std::string entry((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(entry.empty());
  EXPECT_EQ(entry.find("WKTOKEN-qq42"), std::string::npos) << entry;
  EXPECT_EQ(entry.find("GWTOKEN-zz91"), std::string::npos) << entry;
  auto again = cache->send(request);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->from_cache);
  EXPECT_NE(again->body.find(R"("model":"m-<redacted>")"), std::string::npos) << again->body;
}

TEST(Cache, ErrorsAndImagesAreNotCached) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_errors");
  auto cache = caching(inner, options);
  inner->status = 503;
  (void)cache->send(request_for("a"));
  (void)cache->send(request_for("a"));
  EXPECT_EQ(inner->sent.load(), 2) << "a 503 is never an answer";
  inner->status = 200;
  clef::HttpRequest with_image = request_for("a");
  with_image.body.insert(with_image.body.size() - 1, R"(,"images":["iVBORw0KGgo="])");
  (void)cache->send(with_image);
  (void)cache->send(with_image);
  EXPECT_EQ(inner->sent.load(), 4) << "images are not cached unless asked";
  options.include_images = true;
  auto images = caching(inner, options);
  (void)images->send(with_image);
  EXPECT_TRUE(images->send(with_image)->from_cache);
}

TEST(Cache, MovingAliasesExpireAndTornEntriesAreMisses) {
  EXPECT_TRUE(clef::is_moving_alias("clef-flash:latest"));
  EXPECT_TRUE(clef::is_moving_alias("@cf/cloudflare/clef-flash-latest"));
  EXPECT_FALSE(clef::is_moving_alias("clef-flash:9b-q4"));
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_ttl");
  options.ttl = std::chrono::seconds(600);
  auto cache = caching(inner, options, clef::Backend::workers_ai);
  const auto request = request_for("a");
  (void)cache->send(request);
  const std::string path = entry_path(options, request, "workers-ai");
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

// Issue 15, item 7: only a 2xx the client reads as a valid answer to every question is stored,
// and an entry is checked again when read: anything else is a miss and is removed.
TEST(Cache, OnlyValidAnswersAreStoredAndServed) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_valid_only");
  auto cache = caching(inner, options);
  const auto request = request_for("a");
  const std::string path = entry_path(options, request);
  for (const std::string& bad :
       {std::string("<html>Sign in to the hotel Wi-Fi</html>"),
        std::string(R"({"model":"m","answers":{"refund":{"type":"noul","noul":1.7}}})"),
        std::string(R"({"model":"m","answers":{"refund":{"type":"refusal","refusal":"no"}}})"),
        std::string(R"({"model":"m","answers":{}})")}) {
    inner->body = bad;
    (void)cache->send(request);
    EXPECT_FALSE(std::ifstream(path).good()) << "stored: " << bad;
  }
  inner->body.clear();
  ASSERT_FALSE(cache->send(request)->from_cache);
  ASSERT_TRUE(cache->send(request)->from_cache);
  const auto entry = nlohmann::json::parse(std::ifstream(path));
  const int sent = inner->sent.load();
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"status", 500},
           {"status", 99999999999LL},
           {"status", "200"},
           {"created", -9223372036854775807LL},
           {"body", R"({"model":"m","answers":{"refund":{"type":"noul","noul":1.7}}})"},
           {"key", "0000"}}) {
    auto tampered = entry;
    tampered[field] = value;
    std::ofstream(path, std::ios::trunc) << tampered.dump();
    auto response = cache->send(request);
    ASSERT_TRUE(response);
    EXPECT_FALSE(response->from_cache) << field << " = " << value.dump();
    EXPECT_EQ(nlohmann::json::parse(std::ifstream(path))["status"], 200)
        << "replaced by the live answer";
  }
  EXPECT_EQ(inner->sent.load(), sent + 6);
}

// Issue 15, item 10: an entry that is a FIFO, a symlink or a huge file is removed unread.
TEST(Cache, EntriesThatAreNotSmallRegularFilesAreRemovedUnread) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_hostile_entries");
  auto cache = caching(inner, options);
  const auto request = request_for("a");
  ASSERT_TRUE(cache->send(request));
  const std::string path = entry_path(options, request);
  auto send_with_deadline = [&] {
    auto pending = std::async(std::launch::async, [&] { return cache->send(request); });
    if (pending.wait_for(20s) != std::future_status::ready) {
      ADD_FAILURE() << "the read hangs";
      const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);  // release it
      if (fd >= 0) ::close(fd);
    }
    auto response = pending.get();
    EXPECT_TRUE(response);
    return response ? response->from_cache : true;
  };
  struct stat info {};
  ASSERT_EQ(std::remove(path.c_str()), 0);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_FALSE(send_with_deadline());
  ASSERT_EQ(::lstat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode)) << "the FIFO was replaced by the live answer";

  const std::string outside = ::testing::TempDir() + "cache_hostile_outside.json";
  std::ofstream(outside) << std::ifstream(path).rdbuf();  // a valid entry, outside the cache
  for (const std::string& target : {std::string("/dev/zero"), outside}) {
    ASSERT_EQ(std::remove(path.c_str()), 0);
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
    EXPECT_FALSE(send_with_deadline()) << "answered through a symlink to " << target;
    ASSERT_EQ(::lstat(path.c_str(), &info), 0);
    EXPECT_TRUE(S_ISREG(info.st_mode));
  }
  EXPECT_TRUE(std::ifstream(outside).good()) << "only the link is removed";

  ASSERT_EQ(std::remove(path.c_str()), 0);
  std::ofstream(path).put('{');
  ASSERT_EQ(::truncate(path.c_str(), 200L * 1024 * 1024), 0);  // sparse: no disk used
  EXPECT_FALSE(send_with_deadline());
  ASSERT_EQ(::lstat(path.c_str(), &info), 0);
  EXPECT_LT(info.st_size, 100'000);
}

// Issue 15, item 10: a directory another user can write to is refused, and so is a shard in it.
TEST(Cache, AnUnsafeDirectoryIsRefusedWithTheReason) {
  const std::string directory = fresh_directory("cache_unsafe");
  ASSERT_EQ(::mkdir(directory.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(directory.c_str(), 0777), 0);
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = directory;
  auto refused = clef::make_caching_transport(inner, options, clef::Backend::ollama);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("writable by group or others (mode 0777)"),
            std::string::npos)
      << refused.error().message;
  EXPECT_FALSE(clef::check_cache_directory(directory));
  ASSERT_EQ(::chmod(directory.c_str(), 0700), 0);
  EXPECT_TRUE(clef::check_cache_directory(directory));
  // A shard others can write: never read from, never written to.
  const auto request = request_for("a");
  const std::string path = entry_path(options, request);
  const std::string shard = std::filesystem::path(path).parent_path().string();
  ASSERT_EQ(::mkdir(shard.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shard.c_str(), 0777), 0);
  auto cache = caching(inner, options);
  (void)cache->send(request);
  EXPECT_FALSE(std::ifstream(path).good()) << "written into a shard others can write";
  ASSERT_EQ(::chmod(shard.c_str(), 0700), 0);
  (void)cache->send(request);
  ASSERT_TRUE(std::ifstream(path).good());
  ASSERT_EQ(::chmod(shard.c_str(), 0777), 0);  // a planted answer would be read from here now
  EXPECT_FALSE(cache->send(request)->from_cache);

  const std::string file = directory + "/not-a-directory";
  std::ofstream(file) << "x";
  options.directory = file;
  auto not_directory = clef::make_caching_transport(inner, options, clef::Backend::ollama);
  ASSERT_FALSE(not_directory);
  EXPECT_NE(not_directory.error().message.find("is not a directory"), std::string::npos);
  EXPECT_FALSE(clef::cache_stats(directory + "/missing"));
}

// Issue 15, item 11: the cap counts disk blocks (a 300-byte entry takes a 4 KiB block).
TEST(Cache, AShardRemovedWhileTheCacheIsOpenIsMadeAgain) {
  // The cache keeps its shard directories open; one deleted from under it (rm -rf, a person
  // tidying up) is a miss, and the answer is stored in a new shard, not lost into the old one.
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_shard_removed");
  auto cache = caching(inner, options);
  const auto request = request_for("a");
  const std::string path = entry_path(options, request);
  ASSERT_FALSE(cache->send(request)->from_cache);
  ASSERT_TRUE(cache->send(request)->from_cache);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  EXPECT_FALSE(cache->send(request)->from_cache);
  EXPECT_TRUE(std::ifstream(path).good()) << "not stored again after its shard went";
  EXPECT_TRUE(cache->send(request)->from_cache);
  EXPECT_EQ(inner->sent.load(), 2);
}

TEST(Cache, AStateThatNamesImagesIsStillCachedWhenItCarriesNone) {
  // "images" in the ticket's text is not an images field: the body is read to tell them apart.
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_named_images");
  auto cache = caching(inner, options);
  const auto request = request_for(R"(my "images" and "audio" and "videos" are gone)");
  ASSERT_FALSE(cache->send(request)->from_cache);
  EXPECT_TRUE(cache->send(request)->from_cache);
  EXPECT_EQ(inner->sent.load(), 1);
}

TEST(Cache, EachAnswerIsCheckedAgainstItsOwnRequestsQuestions) {
  // The cache keeps the last question set it read: requests that alternate between two sets
  // must each be checked against their own. The answer names "refund" only, so it answers the
  // first set and not the second ("urgent"), whose answers are never stored.
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_alternating_questions");
  auto cache = caching(inner, options);
  auto urgent_request = [](const std::string& state) {
    clef::HttpRequest request = request_for(state);
    request.body = R"({"model":"clef-flash","state":)" + nlohmann::json(state).dump() +
                   R"(,"questions":{"urgent":{"type":"noul","instructions":"Urgent?"}}})";
    return request;
  };
  for (int round = 0; round < 3; ++round) {
    const std::string state = "ticket " + std::to_string(round);
    (void)cache->send(request_for(state));
    (void)cache->send(urgent_request(state));
  }
  for (int round = 0; round < 3; ++round) {
    const std::string state = "ticket " + std::to_string(round);
    EXPECT_TRUE(cache->send(request_for(state))->from_cache) << round;
    EXPECT_FALSE(cache->send(urgent_request(state))->from_cache) << round;
  }
  EXPECT_EQ(inner->sent.load(), 9);  // 3 + 3 first, then the 3 "urgent" ones again

  // An empty attachment list carries nothing: cached like no list at all; a list with an image
  // is not (include_images is off).
  clef::HttpRequest empty = request_for("no pictures");
  empty.body.insert(empty.body.size() - 1, R"(,"images": [ ],"audio":[])");
  (void)cache->send(empty);
  EXPECT_TRUE(cache->send(empty)->from_cache);
  clef::HttpRequest pictured = request_for("a picture");
  pictured.body.insert(pictured.body.size() - 1, R"(,"images": [ "iVBORw0KGgo=" ])");
  (void)cache->send(pictured);
  EXPECT_FALSE(cache->send(pictured)->from_cache);
}

TEST(Cache, TheSizeCapCountsDiskBlocks) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_cap");
  options.max_bytes = 40u * 4096u;
  auto cache = caching(inner, options);
  for (int i = 0; i < 299; ++i) (void)cache->send(request_for(std::to_string(i)));
  // The last entry must be the newest whatever the file system's timestamp granularity: the
  // others are dated an hour back rather than waited past the clock's tick.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(options.directory)) {
    if (entry.is_regular_file())
      std::filesystem::last_write_time(entry.path(),
                                       std::filesystem::file_time_type::clock::now() - 1h);
  }
  (void)cache->send(request_for("299"));
  // Checked about every 64 writes: at most 63 entries (a block or two each) past the last check.
  EXPECT_LE(disk_usage(options.directory), options.max_bytes + 63u * 8192u);
  auto stats = clef::cache_stats(options.directory);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->bytes, disk_usage(options.directory));
  EXPECT_TRUE(cache->send(request_for("299"))->from_cache) << "the most recent entry survives";
  auto cleared = clef::clear_cache(options.directory);
  ASSERT_TRUE(cleared);
  EXPECT_GT(cleared->entries, 0u);
  EXPECT_EQ(clef::cache_stats(options.directory)->entries, 0u);
}

// Issue 15, item 11: opening a cache does not scan it (every `clef ask` did, 0.43 s at 100k
// entries); the cap is enforced after writes.
TEST(Cache, OpeningACacheDoesNotScanIt) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_no_start_scan");
  auto filler = caching(inner, options);
  for (int i = 0; i < 20; ++i) (void)filler->send(request_for(std::to_string(i)));
  ASSERT_EQ(clef::cache_stats(options.directory)->entries, 20u);
  options.max_bytes = 4096;  // far over the cap now
  auto reader = caching(inner, options);
  EXPECT_TRUE(reader->send(request_for("0"))->from_cache);
  EXPECT_EQ(clef::cache_stats(options.directory)->entries, 20u) << "evicted at start";
  for (int i = 20; i < 20 + 64; ++i) (void)reader->send(request_for(std::to_string(i)));
  EXPECT_LT(clef::cache_stats(options.directory)->entries, 20u + 64u) << "never evicted";
}

// Issue 15, item 11: a killed writer's temporary file is swept by eviction once it is stale.
TEST(Cache, EvictionSweepsStaleTemporaryFiles) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_stale_temp");
  auto cache = caching(inner, options);
  // The leftovers are there before the first write: the first scan may come at any of the
  // first 64 writes, the very first one included.
  const std::string path = entry_path(options, request_for("a"));
  const std::string shard = std::filesystem::path(path).parent_path().string();
  const std::string key = std::filesystem::path(path).stem().string();
  ASSERT_EQ(::mkdir(shard.c_str(), 0700), 0) << shard;
  const std::string stale = shard + "/." + key + ".Ab3xYz";
  const std::string fresh = shard + "/." + key + ".Zz9wQq";
  std::ofstream(stale) << std::string(5000, 'x');
  std::ofstream(fresh) << std::string(5000, 'x');  // a writer at work right now
  struct timespec old[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, stale.c_str(), old, 0), 0);
  (void)cache->send(request_for("a"));
  for (int i = 0; i < 64; ++i) (void)cache->send(request_for(std::to_string(i)));
  EXPECT_FALSE(std::ifstream(stale).good()) << "a killed writer's file is never swept";
  EXPECT_TRUE(std::ifstream(fresh).good()) << "a live writer's file was removed";
}

TEST(Cache, StatsAndClearTouchOnlyTheCachesOwnEntries) {
  // The cache lives in a directory that holds other files, beside and above its entries.
  const std::string parent = fresh_directory("cache_parent");
  ::mkdir(parent.c_str(), 0755);
  const std::string directory = parent + "/cache";
  const std::string neighbour = parent + "/report.json";
  std::ofstream(neighbour) << "{}";
  ::mkdir(directory.c_str(), 0700);
  ::mkdir((directory + "/ab").c_str(), 0700);
  std::ofstream(directory + "/ab/notes.json") << "{}";  // not KEY.json
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = directory;
  (void)caching(inner, options)->send(request_for("a"));
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
      auto cache = clef::make_caching_transport(inner, options, clef::Backend::ollama);
      if (!cache) {
        ++wrong;
        return;
      }
      for (int i = 0; i < 300; ++i) {
        const auto request = request_for(std::to_string((i * 7 + t) % 25));
        auto response = cache.value()->send(request);
        if (!response ||
            nlohmann::json::parse(response->body)["echo"] != nlohmann::json(request.body))
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
  auto cache = caching(inner, options);
  const int before = inner->sent.load();
  for (int k = 0; k < 25; ++k) {
    EXPECT_TRUE(cache->send(request_for(std::to_string(k)))->from_cache);
  }
  EXPECT_EQ(inner->sent.load(), before);
}

/// A directory outside the cache holding `name`, and the path of that file.
std::string outside_file(const std::string& directory, const std::string& name) {
  ::mkdir(directory.c_str(), 0700);
  const std::string path = directory + "/" + name;
  std::ofstream(path) << "{\"precious\": true}";
  return path;
}

// Issue 15, item 10: clear never follows a symlinked shard or entry out of the cache.
TEST(Cache, ClearNeverFollowsSymlinksOutOfTheCache) {
  const std::string directory = fresh_directory("cache_symlinks");
  const std::string outside = ::testing::TempDir() + "cache_symlinks_outside";
  const std::string key_a = "ab" + std::string(62, '0');
  const std::string key_b = "cd" + std::string(62, '1');
  const std::string victim_a = outside_file(outside, key_a + ".json");
  const std::string victim_b = outside_file(outside, key_b + ".json");
  ::mkdir(directory.c_str(), 0700);
  ASSERT_EQ(::symlink(outside.c_str(), (directory + "/ab").c_str()), 0);  // a shard
  ::mkdir((directory + "/cd").c_str(), 0700);
  ASSERT_EQ(::symlink(victim_b.c_str(), (directory + "/cd/" + key_b + ".json").c_str()), 0);
  auto stats = clef::cache_stats(directory);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 0u) << "a symlink is not an entry";
  auto cleared = clef::clear_cache(directory);
  ASSERT_TRUE(cleared) << cleared.error().to_string();
  EXPECT_TRUE(std::ifstream(victim_a).good()) << "clear followed a symlinked shard";
  EXPECT_TRUE(std::ifstream(victim_b).good()) << "clear followed a symlinked entry";
}

// Issue 15, item 11: a temporary file a killed writer left behind is swept by clear.
TEST(Cache, ClearSweepsAKilledWritersTemporaryFiles) {
  const std::string directory = fresh_directory("cache_temp_sweep");
  const std::string key = "ef" + std::string(62, '2');
  ::mkdir(directory.c_str(), 0700);
  ::mkdir((directory + "/ef").c_str(), 0700);
  const std::string temp = directory + "/ef/." + key + ".Ab3xYz";
  std::ofstream(temp) << std::string(5000, 'x');  // half an entry
  struct timespec old[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, temp.c_str(), old, 0), 0);
  ASSERT_TRUE(clef::clear_cache(directory));
  EXPECT_FALSE(std::ifstream(temp).good()) << "the killed writer's temporary file is still there";
}

// Issue 15, item 11: the cache counts what it takes on disk (blocks), not the files' sizes.
TEST(Cache, StatsCountDiskBlocksNotFileSizes) {
  const std::string directory = fresh_directory("cache_blocks");
  const std::string key = "0a" + std::string(62, '3');
  ::mkdir(directory.c_str(), 0700);
  ::mkdir((directory + "/0a").c_str(), 0700);
  const std::string entry = directory + "/0a/" + key + ".json";
  std::ofstream(entry) << "{}";  // 2 bytes, one block
  struct stat info {};
  ASSERT_EQ(::stat(entry.c_str(), &info), 0);
  auto stats = clef::cache_stats(directory);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 1u);
  EXPECT_EQ(stats->bytes, static_cast<std::uint64_t>(info.st_blocks) * 512u);
}

}  // namespace

namespace {

TEST(CacheModelVersion, OllamaIsKeyedByTheDigestOthersByNameWithAShortTtlForAliases) {
  clef::MockServer server;
  server.set_models({"clef-flash", "clef"});
  server.set_model_digest("clef-flash:latest", "sha256:aaaa");
  clef::ClientOptions options;
  options.base_url = server.base_url();
  auto version = clef::resolve_model_version(options, "clef-flash");
  ASSERT_TRUE(version.ok()) << version.error().to_string();
  EXPECT_EQ(version->version, "clef-flash:latest@sha256:aaaa");
  EXPECT_EQ(version->ttl, std::chrono::seconds(0));             // a digest never moves
  server.set_model_digest("clef-flash:latest", "sha256:bbbb");  // re-pulled: another key
  EXPECT_EQ(clef::resolve_model_version(options, "clef-flash")->version,
            "clef-flash:latest@sha256:bbbb");

  auto missing = clef::resolve_model_version(options, "nimble");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot learn the digest of nimble"), std::string::npos);
  EXPECT_NE(missing.error().message.find("(no such model)"), std::string::npos);
  clef::ClientOptions down = options;
  down.base_url = "http://127.0.0.1:" + std::to_string(clef::refusing_port());
  down.retry.max_attempts = 1;
  auto unreachable = clef::resolve_model_version(down, "clef-flash");
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.error().kind, clef::ErrorKind::connection_failed);

  clef::ClientOptions workers;
  workers.backend = clef::Backend::workers_ai;
  EXPECT_EQ(clef::resolve_model_version(workers, "@cf/cloudflare/clef-flash")->ttl,
            std::chrono::seconds(0));
  const auto alias = clef::resolve_model_version(workers, "@cf/cloudflare/clef-flash-latest");
  EXPECT_EQ(alias->version, "@cf/cloudflare/clef-flash-latest");
  EXPECT_EQ(alias->ttl, clef::moving_alias_ttl);
}

}  // namespace
