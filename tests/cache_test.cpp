// The decision cache: hits, misses on any change, TTLs, a size cap, and many writers at once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
#include "support/cache_packs.hpp"

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

/// Where clef before packs kept the entry for `request`: KEY.json in its shard (still read).
std::string entry_path(const clef::CacheOptions& options, const clef::HttpRequest& request,
                       const char* tag = "ollama") {
  const std::string key = clef::cache_key(tag, request, options.model_version);
  return options.directory + "/" + key.substr(0, 2) + "/" + key + ".json";
}

/// Every byte the cache's files hold, whatever their layout.
std::string everything_stored(const std::string& directory) {
  std::string out;
  for (const auto& item : std::filesystem::recursive_directory_iterator(directory)) {
    if (item.is_regular_file()) out += clef::testing::file_text(item.path().string());
  }
  return out;
}

/// Plants `entry` (an entry's JSON, as a pack holds it) as KEY.json for `request`, the layout
/// clef wrote before packs, and removes the packs: the cache must read such entries as it
/// always did.
void plant_file_entry(const clef::CacheOptions& options, const clef::HttpRequest& request,
                      const std::string& entry) {
  const std::string path = entry_path(options, request);
  std::filesystem::remove_all(options.directory + "/packs");
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  ::chmod(std::filesystem::path(path).parent_path().c_str(), 0700);
  std::ofstream(path, std::ios::binary) << entry;
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

TEST(Cache, AKeyIsTheDigestOfItsPartsAsEarlierBuildsWroteIt) {
  // Entries of earlier builds are found only while the key is made the same way: the SHA-256 of
  // tag, method, URL and model version, each followed by a unit separator, then the body.
  const clef::HttpRequest request = request_for("charged twice");
  EXPECT_EQ(clef::cache_key("ollama", request, "sha256:abc"),
            clef::sha256_hex("ollama\x1f" + request.method + "\x1f" + request.url +
                             "\x1fsha256:abc\x1f" + request.body));
  EXPECT_NE(clef::cache_key("ollama", request, "sha256:abc"),
            clef::cache_key("workers-ai", request, "sha256:abc"));
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
  const std::string entry = everything_stored(options.directory);
  ASSERT_NE(entry.find("refund"), std::string::npos) << "not written at once: " << entry;
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
  const auto request = request_for("a");
  // Each step its own cache, as each run is: an entry reaches its pack when the cache goes.
  auto sent_from_cache = [&] {
    auto response = caching(inner, options, clef::Backend::workers_ai)->send(request);
    return response && response->from_cache;
  };
  EXPECT_FALSE(sent_from_cache());
  clef::testing::edit_entries(options.directory, [](nlohmann::json& entry) {
    entry["created"] = entry["created"].get<long long>() - 601;  // written 10 minutes ago
  });
  EXPECT_FALSE(sent_from_cache()) << "an alias older than its TTL is asked again";
  EXPECT_TRUE(sent_from_cache());
  for (const auto& path : clef::testing::pack_paths(options.directory)) {
    auto entries = clef::testing::read_pack(path);
    for (auto& entry : entries) entry.text = entry.text.substr(0, 40);  // a torn entry
    clef::testing::replace_pack(path, clef::testing::pack_bytes(entries));
  }
  EXPECT_FALSE(sent_from_cache());
  EXPECT_EQ(inner->sent.load(), 3);
  EXPECT_TRUE(sent_from_cache());
  // The torn pack that was read is gone; the older one, whose entry the newer shadowed, is never
  // read (it ages out).
  std::size_t torn = 0;
  for (const auto& entry : clef::testing::packed_entries(options.directory))
    torn += entry.text.size() == 40u ? 1 : 0;
  EXPECT_EQ(torn, 1u);
}

// Issue 15, item 7: only a 2xx the client reads as a valid answer to every question is stored,
// and an entry is checked again when read: anything else is a miss and is removed.
TEST(Cache, OnlyValidAnswersAreStoredAndServed) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_valid_only");
  const auto request = request_for("a");
  auto sent_from_cache = [&] {
    auto response = caching(inner, options)->send(request);
    EXPECT_TRUE(response);
    return response && response->from_cache;
  };
  for (const std::string& bad :
       {std::string("<html>Sign in to the hotel Wi-Fi</html>"),
        std::string(R"({"model":"m","answers":{"refund":{"type":"noul","noul":1.7}}})"),
        std::string(R"({"model":"m","answers":{"refund":{"type":"refusal","refusal":"no"}}})"),
        std::string(R"({"model":"m","answers":{}})")}) {
    inner->body = bad;
    (void)sent_from_cache();
    EXPECT_EQ(clef::cache_stats(options.directory)->entries, 0u) << "stored: " << bad;
  }
  inner->body.clear();
  ASSERT_FALSE(sent_from_cache());
  ASSERT_TRUE(sent_from_cache());
  const auto stored = clef::testing::packed_entries(options.directory);
  ASSERT_EQ(stored.size(), 1u);
  const auto entry = nlohmann::json::parse(stored[0].text);
  int sent = inner->sent.load();
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"status", 500},
           {"status", 99999999999LL},
           {"status", "200"},
           {"created", -9223372036854775807LL},
           {"created", static_cast<long long>(::time(nullptr)) + 3600},  // an hour ahead
           {"body", R"({"model":"m","answers":{"refund":{"type":"noul","noul":1.7}}})"},
           {"key", "0000"}}) {
    for (const bool in_a_pack : {true, false}) {
      auto tampered = entry;
      // Stored a second before the live answer that replaces it will be (of two entries for one
      // request stored in the same second, either may answer: the tampered one would, once).
      tampered["created"] = stored[0].created - 1;
      tampered[field] = value;
      std::filesystem::remove_all(options.directory);
      if (in_a_pack) {
        std::filesystem::create_directories(options.directory + "/packs");
        clef::testing::replace_pack(
            options.directory + "/packs/00000000000000aa.pack",
            clef::testing::pack_bytes({{stored[0].key, stored[0].created - 1, tampered.dump()}}));
      } else {
        plant_file_entry(options, request, tampered.dump());
      }
      EXPECT_FALSE(sent_from_cache())
          << field << " = " << value.dump() << " in a pack " << in_a_pack;
      EXPECT_EQ(inner->sent.load(), ++sent);
      EXPECT_TRUE(sent_from_cache()) << "not replaced by the live answer: " << field << " = "
                                     << value.dump() << " in a pack " << in_a_pack;
      if (!in_a_pack) {
        EXPECT_FALSE(std::filesystem::exists(entry_path(options, request))) << "still there";
      }
    }
  }
}

// Issue 15, item 10: an entry that is a FIFO, a symlink or a huge file is removed unread.
TEST(Cache, EntriesThatAreNotSmallRegularFilesAreRemovedUnread) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_hostile_entries");
  const auto request = request_for("a");
  ASSERT_TRUE(caching(inner, options)->send(request));
  const auto stored = clef::testing::packed_entries(options.directory);
  ASSERT_EQ(stored.size(), 1u);
  // Each run its own cache (as each process is), with a deadline: a hang fails the test.
  auto send_with_deadline = [&](const std::string& planted) {
    auto pending =
        std::async(std::launch::async, [&] { return caching(inner, options)->send(request); });
    if (pending.wait_for(20s) != std::future_status::ready) {
      ADD_FAILURE() << "the read hangs";
      const int fd = ::open(planted.c_str(), O_WRONLY | O_NONBLOCK);  // release it
      if (fd >= 0) ::close(fd);
    }
    auto response = pending.get();
    EXPECT_TRUE(response);
    return response ? response->from_cache : true;
  };
  const std::string outside = ::testing::TempDir() + "cache_hostile_outside.json";
  std::ofstream(outside) << stored[0].text;  // a valid entry, outside the cache
  const std::string outside_pack = ::testing::TempDir() + "cache_hostile_outside.pack";
  std::ofstream(outside_pack) << clef::testing::pack_bytes(stored);  // a valid pack, outside

  // In a file of its own (as clef wrote entries before packs), and as a pack.
  for (const bool in_a_pack : {false, true}) {
    SCOPED_TRACE(in_a_pack ? "a pack" : "a file entry");
    std::filesystem::remove_all(options.directory);
    std::string path;
    if (in_a_pack) {
      std::filesystem::create_directories(options.directory + "/packs");
      path = options.directory + "/packs/00000000000000ab.pack";
    } else {
      plant_file_entry(options, request, stored[0].text);
      path = entry_path(options, request);
      ASSERT_EQ(std::remove(path.c_str()), 0);
    }
    ::chmod(options.directory.c_str(), 0700);
    ::chmod((options.directory + "/packs").c_str(), 0700);
    struct stat info {};
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    EXPECT_FALSE(send_with_deadline(path));
    EXPECT_NE(::lstat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode), true)
        << "the FIFO is still there";
    EXPECT_TRUE(send_with_deadline(path)) << "the live answer was not stored";

    for (const std::string& target :
         {std::string("/dev/zero"), in_a_pack ? outside_pack : outside}) {
      std::filesystem::remove_all(options.directory + "/packs");
      std::filesystem::create_directories(options.directory + "/packs");
      ::chmod((options.directory + "/packs").c_str(), 0700);
      std::remove(path.c_str());
      ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
      EXPECT_FALSE(send_with_deadline(path)) << "answered through a symlink to " << target;
      EXPECT_NE(::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode), true)
          << "the link is still there";
    }
    EXPECT_TRUE(std::ifstream(outside).good()) << "only the link is removed";
    EXPECT_TRUE(std::ifstream(outside_pack).good()) << "only the link is removed";

    std::filesystem::remove_all(options.directory + "/packs");
    std::filesystem::create_directories(options.directory + "/packs");
    ::chmod((options.directory + "/packs").c_str(), 0700);
    std::remove(path.c_str());
    // 200 MB, sparse (no disk used): a pack whose header is a valid one's.
    std::ofstream(path) << (in_a_pack ? clef::testing::pack_bytes(stored) : std::string("{"));
    ASSERT_EQ(::truncate(path.c_str(), 200L * 1024 * 1024), 0);
    const bool answered = send_with_deadline(path);
    if (!in_a_pack) {
      EXPECT_FALSE(answered);
      EXPECT_FALSE(std::filesystem::exists(path)) << "the huge entry was read";
    }
  }
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
  // The packs' directory, when others can write it: never read from, never written to.
  const auto request = request_for("a");
  const std::string packs = directory + "/packs";
  // (Made already by the run above, which opened the directory: a run makes it at once.)
  ASSERT_TRUE(::mkdir(packs.c_str(), 0700) == 0 || errno == EEXIST);
  ASSERT_EQ(::chmod(packs.c_str(), 0777), 0);
  // Refused with the reason, as the directory itself is: never a cache silently off.
  auto packs_refused = clef::make_caching_transport(inner, options, clef::Backend::ollama);
  ASSERT_FALSE(packs_refused);
  EXPECT_NE(packs_refused.error().message.find(
                "its packs/ is refused: it is writable by group or others (mode 0777)"),
            std::string::npos)
      << packs_refused.error().message;
  EXPECT_FALSE(clef::cache_stats(directory));
  EXPECT_FALSE(clef::clear_cache(directory));
  ASSERT_EQ(::chmod(packs.c_str(), 0700), 0);
  (void)caching(inner, options)->send(request);
  ASSERT_EQ(clef::testing::pack_paths(directory).size(), 1u);
  auto cache = caching(inner, options);
  EXPECT_TRUE(cache->send(request)->from_cache);
  ASSERT_EQ(::chmod(packs.c_str(), 0777), 0);  // a planted answer would be read from here now
  EXPECT_FALSE(cache->send(request)->from_cache) << "read from packs/ others can write";
  ASSERT_EQ(::chmod(packs.c_str(), 0700), 0);
  ASSERT_EQ(::rename(packs.c_str(), (directory + "/elsewhere").c_str()), 0);
  ASSERT_EQ(::symlink("elsewhere", packs.c_str()), 0);
  auto linked = clef::make_caching_transport(inner, options, clef::Backend::ollama);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("its packs/ is a symbolic link"), std::string::npos)
      << linked.error().message;
  ASSERT_EQ(::unlink(packs.c_str()), 0);

  const std::string file = directory + "/not-a-directory";
  std::ofstream(file) << "x";
  options.directory = file;
  auto not_directory = clef::make_caching_transport(inner, options, clef::Backend::ollama);
  ASSERT_FALSE(not_directory);
  EXPECT_NE(not_directory.error().message.find("is not a directory"), std::string::npos);
  EXPECT_FALSE(clef::cache_stats(directory + "/missing"));
}

// Issue 15, item 11: the cap counts disk blocks (a 300-byte entry takes a 4 KiB block).
TEST(Cache, ThePacksDirectoryRemovedWhileTheCacheIsOpenIsMadeAgain) {
  // The cache keeps its packs' directory open; one deleted from under it (rm -rf, a person
  // tidying up) is a miss, and the answer is stored in a new one, not lost into the old one.
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_shard_removed");
  const auto request = request_for("a");
  {
    auto cache = caching(inner, options);
    ASSERT_FALSE(cache->send(request)->from_cache);
    ASSERT_TRUE(cache->send(request)->from_cache);
    std::filesystem::remove_all(options.directory + "/packs");
    EXPECT_FALSE(cache->send(request)->from_cache);
    EXPECT_TRUE(cache->send(request)->from_cache);
  }
  EXPECT_EQ(clef::testing::pack_paths(options.directory).size(), 1u)
      << "not stored again after its directory went";
  EXPECT_TRUE(caching(inner, options)->send(request)->from_cache);
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
  {
    auto cache = caching(inner, options);
    for (int i = 0; i < 299; ++i) (void)cache->send(request_for(std::to_string(i)));
  }
  EXPECT_GT(clef::testing::pack_paths(options.directory).size(), 4u)
      << "packs of a sixteenth of the cap: evicting one frees a small part";
  // The last entry must be the newest whatever the file system's timestamp granularity: the
  // others are dated an hour back rather than waited past the clock's tick.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(options.directory)) {
    if (entry.is_regular_file())
      std::filesystem::last_write_time(entry.path(),
                                       std::filesystem::file_time_type::clock::now() - 1h);
  }
  (void)caching(inner, options)->send(request_for("299"));
  // Checked about every 64 entries: at most 63 entries (a pack of a sixteenth of the cap each,
  // at most) past the last check.
  EXPECT_LE(disk_usage(options.directory), options.max_bytes + 63u * 8192u);
  auto stats = clef::cache_stats(options.directory);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->bytes, disk_usage(options.directory));
  EXPECT_TRUE(caching(inner, options)->send(request_for("299"))->from_cache)
      << "the most recent entry survives";
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
  {
    auto filler = caching(inner, options);
    for (int i = 0; i < 20; ++i) (void)filler->send(request_for(std::to_string(i)));
  }
  ASSERT_EQ(clef::cache_stats(options.directory)->entries, 20u);
  options.max_bytes = 4096;  // far over the cap now
  {
    auto reader = caching(inner, options);
    EXPECT_TRUE(reader->send(request_for("0"))->from_cache);
    EXPECT_EQ(clef::cache_stats(options.directory)->entries, 20u) << "evicted at start";
    for (int i = 20; i < 20 + 64; ++i) (void)reader->send(request_for(std::to_string(i)));
  }
  EXPECT_LT(clef::cache_stats(options.directory)->entries, 20u + 64u) << "never evicted";
}

// Issue 15, item 11: a killed writer's temporary file is swept by eviction once it is stale.
TEST(Cache, EvictionSweepsStaleTemporaryFiles) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_stale_temp");
  // The leftovers are there before the first write: the first scan may come at any of the
  // first 64 entries, the very first one included. A pack's, and a file entry's (clef before
  // packs).
  const std::string path = entry_path(options, request_for("a"));
  const std::string shard = std::filesystem::path(path).parent_path().string();
  const std::string key = std::filesystem::path(path).stem().string();
  std::filesystem::create_directories(shard);
  std::filesystem::create_directories(options.directory + "/packs");
  ::chmod(options.directory.c_str(), 0700);
  ::chmod(shard.c_str(), 0700);
  ::chmod((options.directory + "/packs").c_str(), 0700);
  const std::vector<std::string> stale = {shard + "/." + key + ".Ab3xYz",
                                          options.directory + "/packs/.0123456789abcdef.tmp"};
  const std::vector<std::string> fresh = {shard + "/." + key + ".Zz9wQq",
                                          options.directory + "/packs/.fedcba9876543210.tmp"};
  struct timespec old[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
  for (const auto& file : stale) {
    std::ofstream(file) << std::string(5000, 'x');
    ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), old, 0), 0);
  }
  for (const auto& file : fresh) std::ofstream(file) << std::string(5000, 'x');  // at work now
  {
    auto cache = caching(inner, options);
    (void)cache->send(request_for("a"));
    for (int i = 0; i < 64; ++i) (void)cache->send(request_for(std::to_string(i)));
  }
  for (const auto& file : stale)
    EXPECT_FALSE(std::ifstream(file).good()) << "a killed writer's file is never swept: " << file;
  for (const auto& file : fresh)
    EXPECT_TRUE(std::ifstream(file).good()) << "a live writer's file was removed: " << file;
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

// Issue 30: a miss created a file per entry (~50 µs of system time each on ext4); entries now go
// into packs of many, and every cache sees every pack.
TEST(Cache, ABatchOfEntriesTakesAFewPacksAndAnotherCacheReadsThemAll) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_packs_many");
  const auto started = std::chrono::steady_clock::now();
  {
    auto cache = caching(inner, options);
    for (int i = 0; i < 1200; ++i) (void)cache->send(request_for(std::to_string(i)));
  }
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started)
          .count();
  // 512 entries to a pack, or a second's worth: 1 + 3 + one a second at most.
  EXPECT_LE(clef::testing::pack_paths(options.directory).size(),
            static_cast<std::size_t>(5 + seconds));
  EXPECT_EQ(clef::cache_stats(options.directory)->entries, 1200u);
  EXPECT_EQ(clef::testing::packed_entries(options.directory).size(), 1200u);
  const int sent = inner->sent.load();
  auto reader = caching(inner, options);
  for (int i = 0; i < 1200; ++i)
    ASSERT_TRUE(reader->send(request_for(std::to_string(i)))->from_cache) << i;
  EXPECT_EQ(inner->sent.load(), sent);
}

TEST(Cache, AnotherProcesssPacksAreSeenWhileBothAreOpen) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_packs_live");
  auto reader = caching(inner, options);
  EXPECT_FALSE(reader->send(request_for("reader's own"))->from_cache);  // it has listed them
  // Another process (the caches of one process share their store): it stores 600 answers, of
  // which 512 fill a pack, and ends without writing the rest.
  const pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    clef::CacheOptions own = options;
    own.key_salt = "";  // the same key space
    auto cache = clef::make_caching_transport(inner, own, clef::Backend::ollama);
    for (int i = 0; cache && i < 600; ++i)
      (void)cache.value()->send(request_for(std::to_string(i)));
    ::_exit(cache ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(writer, &status, 0), writer);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const int sent = inner->sent.load();  // the parent's count: the child's sends were its own
  EXPECT_TRUE(reader->send(request_for("0"))->from_cache);
  EXPECT_TRUE(reader->send(request_for("1"))->from_cache);
  EXPECT_TRUE(reader->send(request_for("511"))->from_cache);
  EXPECT_EQ(inner->sent.load(), sent);
}

TEST(Cache, CachesOnOneDirectoryInOneProcessShareWhatWaitsForAPack) {
  // A second client on the directory, made while the first still holds answers waiting for
  // their pack (within a second of its last pack), finds them at once.
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_packs_shared");
  auto first = caching(inner, options);
  for (int i = 0; i < 5; ++i) (void)first->send(request_for(std::to_string(i)));
  ASSERT_LT(clef::testing::packed_entries(options.directory).size(), 5u)
      << "all written at once: nothing waits, nothing to share (a slow machine?)";
  auto second = caching(inner, options);
  const int sent = inner->sent.load();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(second->send(request_for(std::to_string(i)))->from_cache);
  EXPECT_EQ(inner->sent.load(), sent);
}

TEST(Cache, WhatWaitsForAPackIsWrittenWhenTheProcessExits) {
  // A program that exits right after its last answers keeps them: the first was written at once
  // and the rest, waiting for their pack, were lost when the cache was never let go of (a
  // std::exit, or main returning while a loop thread still held the cache for a moment).
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_packs_exit");
  std::fflush(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto cache = clef::make_caching_transport(inner, options, clef::Backend::ollama);
    for (int i = 0; cache && i < 5; ++i) (void)cache.value()->send(request_for(std::to_string(i)));
    std::exit(cache ? 0 : 1);  // the cache still open: no destructor writes what waits
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(clef::cache_stats(options.directory)->entries, 5u);
  EXPECT_EQ(clef::testing::packed_entries(options.directory).size(), 5u);
}

// Issue 30: a pack is read by its header, whose every number is checked against the file before
// a byte it points at is read; a pack that lies is removed, never an answer or a crash.
TEST(Cache, PacksThatLieAreRemovedAndNeverRead) {
  auto inner = std::make_shared<EchoTransport>();
  clef::CacheOptions options;
  options.directory = fresh_directory("cache_packs_lying");
  const auto request = request_for("a");
  ASSERT_FALSE(caching(inner, options)->send(request)->from_cache);
  const auto good = clef::testing::packed_entries(options.directory);
  ASSERT_EQ(good.size(), 1u);
  const std::string key = good[0].key;
  const std::string text = good[0].text;
  const std::string length = std::to_string(text.size());
  const std::string created = std::to_string(good[0].created);
  const std::string check = clef::testing::entry_check(text);
  auto pack = [&](const std::string& count, const std::string& line, const std::string& body) {
    return "clef-cache-pack 1 " + count + "\n" + line + "\n" + body;
  };
  // A header line for the entry: key, offset, length, created, check; any of them replaced.
  auto line = [&](const std::string& listed_key, const std::string& offset,
                  const std::string& listed_length, const std::string& listed_check) {
    return listed_key + " " + offset + " " + listed_length + " " + created + " " + listed_check;
  };
  const std::string truth = line(key, "0", length, check);
  std::string upper = key;
  upper[0] = 'A';
  auto for_another_key_json = nlohmann::json::parse(text);
  for_another_key_json["key"] = std::string(64, '0');
  const std::string for_another_key = for_another_key_json.dump();
  std::string edited = text;  // edited in place, its check not: a probability changed
  edited[edited.find("0.9")] = '0';
  edited[edited.find("0.9") + 2] = '1';
  const std::vector<std::pair<std::string, std::string>> lies = {
      {"no entries", pack("0", "", text + "\n")},
      {"a count far past the lines", pack("4000", truth, text)},
      {"a count with a leading zero", pack("01", truth, text)},
      {"a count of 2^64", pack("18446744073709551616", truth, text)},
      {"an offset past the end", pack("1", line(key, "999999", length, check), text)},
      {"an offset of 2^64 - 1", pack("1", line(key, "18446744073709551615", length, check), text)},
      {"a length past the end", pack("1", line(key, "0", "99999999", check), text)},
      {"a length of zero", pack("1", line(key, "0", "0", check), text)},
      {"a negative offset", pack("1", line(key, "-1", length, check), text)},
      {"a key in capitals", pack("1", line(upper, "0", length, check), text)},
      {"a short key", pack("1", line(key.substr(2), "0", length, check), text)},
      {"no check", pack("1", key + " 0 " + length + " " + created, text)},
      {"a check in capitals", pack("1", line(key, "0", length, "ABCDEF0123456789"), text)},
      {"a header cut short", "clef-cache-pack 1 1\n" + key + " 0 "},
      {"an entry that is not JSON",
       pack("1", line(key, "0", length, clef::testing::entry_check(std::string(text.size(), '{'))),
            std::string(text.size(), '{'))},
      {"an entry for another key", pack("1",
                                        line(key, "0", std::to_string(for_another_key.size()),
                                             clef::testing::entry_check(for_another_key)),
                                        for_another_key)},
      {"an entry edited in place (its check not)", pack("1", truth, edited)},
      // The header's time chooses the newest of two entries for one key: it must be the entry's.
      {"a header time that is not the entry's",
       pack("1", key + " 0 " + length + " " + std::to_string(good[0].created + 10) + " " + check,
            text)},
      {"nothing at all", ""},
  };
  for (const auto& [what, bytes] : lies) {
    SCOPED_TRACE(what);
    std::filesystem::remove_all(options.directory + "/packs");
    std::filesystem::create_directories(options.directory + "/packs");
    ::chmod((options.directory + "/packs").c_str(), 0700);
    const std::string path = options.directory + "/packs/00000000000000cd.pack";
    clef::testing::replace_pack(path, bytes);
    EXPECT_FALSE(caching(inner, options)->send(request)->from_cache);
    EXPECT_FALSE(std::filesystem::exists(path)) << "the lying pack is still there";
    EXPECT_TRUE(caching(inner, options)->send(request)->from_cache) << "the answer was not stored";
  }
  // A pack others may write (its directory searchable by them) could have been edited by them.
  {
    std::filesystem::remove_all(options.directory + "/packs");
    std::filesystem::create_directories(options.directory + "/packs");
    ::chmod((options.directory + "/packs").c_str(), 0700);
    const std::string path = options.directory + "/packs/00000000000000ce.pack";
    clef::testing::replace_pack(path, pack("1", truth, text + "\n"));
    ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
    EXPECT_FALSE(caching(inner, options)->send(request)->from_cache) << "served a 0666 pack";
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  // A later clef's format sharing the directory: neither read nor removed.
  {
    std::filesystem::remove_all(options.directory + "/packs");
    std::filesystem::create_directories(options.directory + "/packs");
    ::chmod((options.directory + "/packs").c_str(), 0700);
    const std::string path = options.directory + "/packs/00000000000000cf.pack";
    clef::testing::replace_pack(path, "clef-cache-pack 12 1\n" + truth + "\n" + text + "\n");
    EXPECT_FALSE(caching(inner, options)->send(request)->from_cache);
    EXPECT_TRUE(std::filesystem::exists(path)) << "another version's pack was removed";
    EXPECT_TRUE(caching(inner, options)->send(request)->from_cache) << "the answer was not stored";
  }
  // The same pack, told the truth, answers.
  std::filesystem::remove_all(options.directory + "/packs");
  std::filesystem::create_directories(options.directory + "/packs");
  ::chmod((options.directory + "/packs").c_str(), 0700);
  clef::testing::replace_pack(options.directory + "/packs/00000000000000cd.pack",
                              pack("1", truth, text + "\n"));
  const int sent = inner->sent.load();
  EXPECT_TRUE(caching(inner, options)->send(request)->from_cache);
  EXPECT_EQ(inner->sent.load(), sent);
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
  const std::string victim_pack = outside_file(outside, "0123456789abcdef.pack");
  ASSERT_EQ(::symlink(outside.c_str(), (directory + "/packs").c_str()), 0);
  // A symlinked packs/ is refused, with the reason, and nothing is removed.
  auto refused = clef::clear_cache(directory);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("its packs/ is a symbolic link"), std::string::npos)
      << refused.error().message;
  EXPECT_FALSE(clef::cache_stats(directory));
  EXPECT_TRUE(std::ifstream(victim_pack).good()) << "clear followed a symlinked packs directory";
  ASSERT_EQ(::unlink((directory + "/packs").c_str()), 0);
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
  ::mkdir((directory + "/packs").c_str(), 0700);
  const std::string pack_temp = directory + "/packs/.0123456789abcdef.tmp";
  std::ofstream(pack_temp) << std::string(5000, 'x');  // half a pack
  // What a run would remove unread under a pack's or a temporary file's name, clear removes
  // too: the link or the node, never what it points at.
  const std::string target = ::testing::TempDir() + "cache_temp_sweep_target.pack";
  std::ofstream(target) << "precious";
  const std::vector<std::string> strays = {directory + "/packs/0123456789abcdee.pack",
                                           directory + "/packs/.0123456789abcdee.tmp"};
  ASSERT_EQ(::symlink(target.c_str(), strays[0].c_str()), 0);
  ASSERT_EQ(::mkfifo(strays[1].c_str(), 0600), 0);
  ASSERT_TRUE(clef::clear_cache(directory));
  EXPECT_FALSE(std::ifstream(temp).good()) << "the killed writer's temporary file is still there";
  EXPECT_FALSE(std::ifstream(pack_temp).good()) << "the killed writer's half pack is still there";
  for (const auto& stray : strays) {
    struct stat info {};
    EXPECT_NE(::lstat(stray.c_str(), &info), 0) << stray << " is still there";
  }
  EXPECT_EQ(clef::testing::file_text(target), "precious");
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
