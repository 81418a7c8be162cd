// --cache against a local server: a hit sends nothing (the server's log proves it), and any
// change of request, model or model digest is a miss.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "child_clef.hpp"
#include "clef/cache.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"
#include "support/cache_packs.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::run_clef_child;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;

int decisions_sent(const FakeServer& server) {
  int n = 0;
  for (const auto& r : server.requests()) n += r.path == "/v1/systemone";
  return n;
}

/// Every file under the cache, with its size and start: what a wrong count is made of.
std::string list_entries(const std::string& directory) {
  std::string out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory)) {
    if (!entry.is_regular_file()) continue;
    out += entry.path().string() + " " + std::to_string(entry.file_size()) + " " +
           read_file(entry.path().string()).substr(0, 160) + "\n";
  }
  return out;
}

std::string fresh_cache(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  std::filesystem::remove_all(path);
  return path;
}

/// The entries the cache holds (in its packs).
std::vector<clef::testing::PackedEntry> stored_entries(const std::string& directory) {
  return clef::testing::packed_entries(directory);
}

/// Sets an environment variable for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { m_old ? ::setenv(m_name, m_old->c_str(), 1) : ::unsetenv(m_name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

std::vector<std::string> ask_args(const std::string& host, const std::string& cache,
                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "ask", "--host", host, "--json", "--yes-no", "refund: Money back?", "charged twice"};
  if (!cache.empty()) {
    args.push_back("--cache");
    args.push_back(cache);
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliCache, AHitSendsNoRequestAndAnyChangeMisses) {
  FakeServer server;
  server.set_models({"clef-flash", "clef-flash:latest", "clef", "clef:latest"});
  const std::string cache = fresh_cache("cli_cache");
  auto ask = [&](const std::string& state, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"ask",    "--host",   server.base_url(),     "--cache", cache,
                                     "--json", "--yes-no", "refund: Money back?", state};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(args);
  };
  auto first = ask("charged twice");
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(Json::parse(first.out).count("cached"), 0u);
  auto second = ask("charged twice");
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(Json::parse(second.out)["cached"], true);
  EXPECT_EQ(decisions_sent(server), 1) << "the hit sent nothing";
  ask("charged three times");  // another state
  EXPECT_EQ(decisions_sent(server), 2);
  run_clef({"ask", "--host", server.base_url(), "--cache", cache, "--json", "--yes-no",
            "refund: Wants money back?", "charged twice"});  // another question
  EXPECT_EQ(decisions_sent(server), 3);
  ask("charged twice", {"-m", "clef"});  // another model
  EXPECT_EQ(decisions_sent(server), 4);
  server.set_model_digest("clef-flash:latest", "0123456789abcdef");  // the tag moved
  auto moved = ask("charged twice");
  EXPECT_EQ(Json::parse(moved.out).count("cached"), 0u);
  EXPECT_EQ(decisions_sent(server), 5);
  EXPECT_EQ(Json::parse(ask("charged twice").out)["cached"], true);
  EXPECT_EQ(decisions_sent(server), 5);
  // A dry run contacts nothing, cache or not.
  const auto before = server.requests().size();
  EXPECT_EQ(ask("charged twice", {"--dry-run"}).code, 0);
  EXPECT_EQ(server.requests().size(), before);
  // stats and clear.
  auto stats = run_clef({"cache", "stats", "--cache", cache});
  EXPECT_EQ(stats.code, 0);
  EXPECT_EQ(stats.out.rfind("5 entries, ", 0), 0u) << stats.out << list_entries(cache);
  auto cleared = run_clef({"cache", "clear", "--cache", cache});
  EXPECT_EQ(cleared.out.rfind("removed 5 entries", 0), 0u) << cleared.out;
  EXPECT_EQ(run_clef({"cache", "stats"}).code, 2) << "no directory given";
}

TEST(CliCache, BatchMarksAndCountsHits) {
  FakeServer server;
  const std::string cache = fresh_cache("cli_cache_batch");
  const std::string input =
      write_temp_file("cache_tickets.jsonl", clef::testing::jsonl_tickets(20));
  auto batch = [&]() {
    const std::string out = fresh_path("cache_batch_out.jsonl");
    auto r = run_clef({"batch", input, "-o", out, "--host", server.base_url(), "--cache", cache,
                       "--yes-no", "urgent: Is it urgent?"});
    return std::make_pair(r, lines_of(read_file(out)));
  };
  auto [cold, cold_lines] = batch();
  ASSERT_EQ(cold.code, 0) << cold.err;
  auto [warm, warm_lines] = batch();
  ASSERT_EQ(warm.code, 0) << warm.err;
  EXPECT_EQ(decisions_sent(server), 20);
  EXPECT_NE(warm.err.find("20 from the cache"), std::string::npos) << warm.err;
  ASSERT_EQ(warm_lines.size(), 20u);
  for (const auto& line : warm_lines) EXPECT_EQ(line["cached"], true);
  for (const auto& line : cold_lines) EXPECT_EQ(line.count("cached"), 0u);
}

TEST(CliCache, OffWhenTheDigestCannotBeLearned) {
  // A System One server that is not Ollama has no /api/tags: no digest to key the cache by.
  FakeServer server(clef::MockProfile::llamacpp);
  const std::string cache = fresh_cache("cli_cache_off");
  auto r = run_clef({"ask", "--host", server.base_url(), "--cache", cache, "-m", "plain",
                     "--yes-no", "refund: Money back?", "x"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("the cache is off for this run"), std::string::npos) << r.err;
  EXPECT_TRUE(stored_entries(cache).empty());
  // An Ollama that lists the model without a digest (an empty one here; none, null or a number
  // read the same: string_field): keyed by the name alone, a re-pulled model would be served
  // the old one's answers.
  FakeServer ollama;
  ollama.set_model_digest("clef-flash:latest", "");
  for (int run = 0; run < 2; ++run) {
    auto without = run_clef({"ask", "--host", ollama.base_url(), "--cache", cache, "--yes-no",
                             "refund: Money back?", "x", "--json"});
    EXPECT_EQ(without.code, 0) << without.err;
    EXPECT_NE(without.err.find("it lists the model without one"), std::string::npos) << without.err;
    EXPECT_EQ(without.out.find("\"cached\":true"), std::string::npos) << without.out;
    EXPECT_TRUE(stored_entries(cache).empty());
  }
}

// Issue 15, item 7: a 2xx clef rejects is never stored, and an entry that is not a valid 2xx
// decision when read (edited, damaged) is a miss and is removed.
TEST(CliCache, OnlyAnswersThatValidateAreCachedAndATamperedEntryIsAMiss) {
  FakeServer server;
  std::atomic<int> mode{0};  // 0: a captive portal's page; 1: an invalid answer; 2: the model
  server.set_script([&](const clef::MockRequest& request, int) -> std::optional<clef::MockReply> {
    if (request.path != "/v1/systemone" || mode == 2) return std::nullopt;
    clef::MockReply reply;
    if (mode == 0) {
      reply.content_type = "text/html";
      reply.body = "<html><body>Sign in to the hotel Wi-Fi</body></html>";
    } else {
      reply.body = R"({"model":"clef-flash","answers":{"refund":{"type":"noul","noul":1.7}}})";
    }
    return reply;
  });
  const std::string cache = fresh_cache("cli_cache_rejected");
  auto portal = run_clef(ask_args(server.base_url(), cache));
  EXPECT_EQ(portal.code, 4) << portal.err;
  EXPECT_TRUE(stored_entries(cache).empty()) << "an HTML page is not an answer";
  mode = 1;
  auto invalid = run_clef(ask_args(server.base_url(), cache));
  EXPECT_EQ(invalid.code, 4) << invalid.err;
  EXPECT_TRUE(stored_entries(cache).empty()) << "an answer that fails validation is not cached";
  mode = 2;  // the server is fixed: the next run asks it, and is answered
  auto fixed = run_clef(ask_args(server.base_url(), cache));
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  EXPECT_EQ(Json::parse(fixed.out).count("cached"), 0u);
  EXPECT_EQ(decisions_sent(server), 3);
  ASSERT_EQ(stored_entries(cache).size(), 1u);
  EXPECT_EQ(Json::parse(run_clef(ask_args(server.base_url(), cache)).out)["cached"], true);
  EXPECT_EQ(decisions_sent(server), 3);

  clef::testing::edit_entries(cache, [](nlohmann::json& entry) { entry["status"] = 500; });
  auto after_500 = run_clef(ask_args(server.base_url(), cache));
  ASSERT_EQ(after_500.code, 0) << after_500.err;
  EXPECT_EQ(Json::parse(after_500.out).count("cached"), 0u) << "a stored 500 is never served";
  EXPECT_EQ(decisions_sent(server), 4);
  const auto replaced = stored_entries(cache);
  ASSERT_EQ(replaced.size(), 1u) << "the pack holding the 500 is still there";
  EXPECT_EQ(Json::parse(replaced[0].text)["status"], 200) << "replaced by the live answer";

  clef::testing::edit_entries(cache, [](nlohmann::json& entry) {
    entry["body"] = R"({"model":"clef-flash","answers":{"refund":{"type":"noul","noul":1.7}}})";
  });
  auto after_invalid = run_clef(ask_args(server.base_url(), cache));
  ASSERT_EQ(after_invalid.code, 0) << after_invalid.err;
  EXPECT_EQ(Json::parse(after_invalid.out).count("cached"), 0u);
  EXPECT_EQ(decisions_sent(server), 5);
}

// Issue 15, item 8: a replay answers from the cassette only; with CLEF_CACHE_DIR exported it
// neither writes the cassette's answers under the live key nor answers from live entries.
TEST(CliCache, AReplayNeitherWritesNorReadsTheCache) {
  FakeServer server;
  std::atomic<bool> recording{true};
  server.set_script([&](const clef::MockRequest& request, int) -> std::optional<clef::MockReply> {
    if (request.path != "/v1/systemone" || !recording) return std::nullopt;
    clef::MockReply reply;  // what the model said when the cassette was recorded
    reply.body = R"({"model":"clef-flash","answers":{"refund":{"type":"noul","noul":0.123}}})";
    return reply;
  });
  const std::string cassette = fresh_path("cache_poison.cassette.jsonl");
  const std::vector<std::string> systemone = {"--backend", "systemone"};
  auto recorded =
      run_clef(ask_args(server.base_url(), "", {"--backend", "systemone", "--record", cassette}));
  ASSERT_EQ(recorded.code, 0) << recorded.err;
  recording = false;  // the model changed since
  const std::string cache = fresh_cache("cli_cache_replay");
  {
    ScopedEnv environment("CLEF_CACHE_DIR", cache);
    auto replayed =
        run_clef(ask_args(server.base_url(), "", {"--backend", "systemone", "--replay", cassette}));
    ASSERT_EQ(replayed.code, 0) << replayed.err;
    EXPECT_DOUBLE_EQ(Json::parse(replayed.out)["answers"]["refund"]["p_true"].get<double>(), 0.123);
    EXPECT_TRUE(stored_entries(cache).empty()) << "the cassette's answer was cached";
    auto live = run_clef(ask_args(server.base_url(), "", {"--backend", "systemone"}));
    ASSERT_EQ(live.code, 0) << live.err;
    EXPECT_EQ(Json::parse(live.out).count("cached"), 0u) << live.out;
    EXPECT_NE(Json::parse(live.out)["answers"]["refund"]["p_true"].get<double>(), 0.123);
    // The live entry exists now; a replay still answers from the cassette.
    auto replayed_again =
        run_clef(ask_args(server.base_url(), "", {"--backend", "systemone", "--replay", cassette}));
    ASSERT_EQ(replayed_again.code, 0) << replayed_again.err;
    EXPECT_DOUBLE_EQ(Json::parse(replayed_again.out)["answers"]["refund"]["p_true"].get<double>(),
                     0.123);
    EXPECT_EQ(Json::parse(replayed_again.out).count("cached"), 0u);
  }
  // Asked for both on one command line: refused, not silently resolved.
  auto both = run_clef(ask_args(server.base_url(), cache, {"--replay", cassette}));
  EXPECT_EQ(both.code, 2) << both.err;
}

// Issue 15, item 9: --record with a warm cache records the hits too, so the replay has them.
TEST(CliCache, ARecordingWithAWarmCacheHoldsTheHits) {
  FakeServer server;
  const std::string cache = fresh_cache("cli_cache_record");
  const std::string cassette = fresh_path("cache_hits.cassette.jsonl");
  auto warm = run_clef(ask_args(server.base_url(), cache));
  ASSERT_EQ(warm.code, 0) << warm.err;
  auto hit = run_clef(ask_args(server.base_url(), cache, {"--record", cassette}));
  ASSERT_EQ(hit.code, 0) << hit.err;
  EXPECT_EQ(Json::parse(hit.out)["cached"], true);
  EXPECT_EQ(decisions_sent(server), 1);
  const std::string dead = "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port());
  auto replayed = run_clef(ask_args(dead, "", {"--replay", cassette}));
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  Json live = Json::parse(warm.out);
  EXPECT_EQ(Json::parse(replayed.out), live);
}

// Issue 15, item 10: an entry that is a FIFO, a symlink to /dev/zero or a 200 MB file is refused
// before it is read (each run is a child process with a deadline: a hang or a crash fails it).
TEST(CliCache, AnEntryThatIsNotASmallRegularFileIsRefusedUnread) {
  FakeServer server;
  const std::string cache = fresh_cache("cli_cache_hostile");
  ASSERT_EQ(run_clef(ask_args(server.base_url(), cache)).code, 0);
  const auto packs = clef::testing::pack_paths(cache);
  ASSERT_EQ(packs.size(), 1u);
  const std::string entry = packs[0];
  auto run = [&] {
    return run_clef_child(ask_args(server.base_url(), cache), std::chrono::seconds(20));
  };
  auto only_packs_are_clefs = [&] {
    std::filesystem::remove_all(cache + "/packs");
    std::filesystem::create_directories(cache + "/packs");
    ::chmod((cache + "/packs").c_str(), 0700);
  };

  only_packs_are_clefs();
  ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
  auto fifo = run();
  if (!fifo.finished) {  // release the reader the old code left blocked
    const int fd = ::open(entry.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  EXPECT_TRUE(fifo.finished) << "a FIFO entry hangs the run";
  EXPECT_EQ(fifo.code, 0) << fifo.err;
  struct stat info {};
  EXPECT_NE(::lstat(entry.c_str(), &info), 0) << "the FIFO is still there";

  only_packs_are_clefs();
  ASSERT_EQ(::symlink("/dev/zero", entry.c_str()), 0);
  auto zero = run();
  EXPECT_TRUE(zero.finished);
  EXPECT_EQ(zero.code, 0) << zero.err;
  EXPECT_NE(::lstat(entry.c_str(), &info), 0) << "the symlink is still there";
  EXPECT_EQ(stored_entries(cache).size(), 1u) << "the live answer was not stored";

  auto baseline = run();  // the same run over an ordinary pack: what a run takes anyway
  ASSERT_TRUE(baseline.finished);
  only_packs_are_clefs();
  {
    std::ofstream(entry).put('{');
    ASSERT_EQ(::truncate(entry.c_str(), 200L * 1024 * 1024), 0);  // sparse: no disk used
  }
  auto huge = run();
  EXPECT_TRUE(huge.finished);
  EXPECT_EQ(huge.code, 0) << huge.err;
  EXPECT_LT(huge.max_rss_kb, baseline.max_rss_kb + 100 * 1024)
      << "the 200 MB file was read into memory";
  EXPECT_NE(::lstat(entry.c_str(), &info), 0) << "the huge file is still there";
}

// Issue 15, item 10: a cache directory another user can write to (or that another user owns)
// could hold planted answers: it is refused, and the warning says why.
TEST(CliCache, ADirectoryOthersCanWriteIsRefused) {
  FakeServer server;
  const std::string cache = fresh_cache("cli_cache_shared");
  ASSERT_EQ(::mkdir(cache.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(cache.c_str(), 0777), 0);
  auto shared = run_clef(ask_args(server.base_url(), cache));
  EXPECT_EQ(shared.code, 0) << shared.err;
  EXPECT_NE(shared.err.find("the cache is off"), std::string::npos) << shared.err;
  EXPECT_NE(shared.err.find("writable by group or others"), std::string::npos) << shared.err;
  EXPECT_TRUE(stored_entries(cache).empty());
  ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
  if (::geteuid() == 0) {  // only root can give a directory away
    ASSERT_EQ(::chown(cache.c_str(), 65534, 65534), 0);
    auto foreign = run_clef(ask_args(server.base_url(), cache));
    EXPECT_EQ(foreign.code, 0) << foreign.err;
    EXPECT_NE(foreign.err.find("not owned by you"), std::string::npos) << foreign.err;
    EXPECT_TRUE(stored_entries(cache).empty());
    ASSERT_EQ(::chown(cache.c_str(), 0, 0), 0);
  }
  auto fine = run_clef(ask_args(server.base_url(), cache));
  EXPECT_EQ(fine.err.find("the cache is off"), std::string::npos) << fine.err;
  EXPECT_EQ(stored_entries(cache).size(), 1u);
  struct stat info {};
  const auto packs = clef::testing::pack_paths(cache);
  ASSERT_EQ(packs.size(), 1u);
  ASSERT_EQ(::stat(packs[0].c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(std::filesystem::path(packs[0]).parent_path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u) << "the packs' directory";
  // The packs' directory made writable by others: refused the same way, and said.
  ASSERT_EQ(::chmod((cache + "/packs").c_str(), 0777), 0);
  auto shared_packs = run_clef(ask_args(server.base_url(), cache));
  EXPECT_EQ(shared_packs.code, 0) << shared_packs.err;
  EXPECT_NE(shared_packs.err.find("the cache is off"), std::string::npos) << shared_packs.err;
  EXPECT_NE(shared_packs.err.find("its packs/ is refused: it is writable by group or others"),
            std::string::npos)
      << shared_packs.err;
  EXPECT_EQ(Json::parse(shared_packs.out).count("cached"), 0u) << "answered from packs/";
  auto stats_refused = run_clef({"cache", "stats", "--cache", cache});
  EXPECT_EQ(stats_refused.code, 2) << stats_refused.out;
  EXPECT_NE(stats_refused.err.find("its packs/ is refused"), std::string::npos)
      << stats_refused.err;
}

// Issue 15, item 12: a --cache that cannot be a cache says so (and the run goes on without it);
// `clef cache stats` of a directory that does not exist is an error, not "0 entries".
TEST(CliCache, AnUnusableCacheSaysWhyAndStatsOfNothingFails) {
  FakeServer server;
  const std::string file = write_temp_file("cli_cache_is_a_file", "not a directory\n");
  auto regular = run_clef(ask_args(server.base_url(), file));
  EXPECT_EQ(regular.code, 0) << regular.err;
  EXPECT_NE(regular.err.find("the cache is off"), std::string::npos) << regular.err;
  EXPECT_NE(regular.err.find("not a directory"), std::string::npos) << regular.err;
  EXPECT_EQ(read_file(file), "not a directory\n");
  auto beneath = run_clef(ask_args(server.base_url(), file + "/cache"));
  EXPECT_EQ(beneath.code, 0) << beneath.err;
  EXPECT_NE(beneath.err.find("the cache is off"), std::string::npos) << beneath.err;
  EXPECT_NE(beneath.err.find(file + "/cache"), std::string::npos) << beneath.err;
  const std::string missing = fresh_cache("cli_cache_missing");
  auto stats = run_clef({"cache", "stats", "--cache", missing});
  EXPECT_EQ(stats.code, 2) << stats.out;
  EXPECT_NE(stats.err.find(missing), std::string::npos) << stats.err;
  EXPECT_EQ(stats.out, "");
  auto clear = run_clef({"cache", "clear", "--cache", missing});
  EXPECT_EQ(clear.code, 2) << clear.out;
  auto of_file = run_clef({"cache", "stats", "--cache", file});
  EXPECT_EQ(of_file.code, 2) << of_file.out;
}

// Issue 16, promise 5, through the command line: CLEF_CACHE_DIR turns the cache on, an image
// request is sent (not cached) unless --cache-images, and a name ending in "latest" expires
// after 10 minutes where a pinned one never does.
TEST(CliCache, EnvironmentImagesAndExpiryAsTheReadmeSays) {
  FakeServer server;
  const std::string cache = fresh_cache("cli_cache_promises");
  {
    ScopedEnv env("CLEF_CACHE_DIR", cache);
    ASSERT_EQ(run_clef(ask_args(server.base_url(), "")).code, 0);
    auto hit = run_clef(ask_args(server.base_url(), ""));
    ASSERT_EQ(hit.code, 0) << hit.err;
    EXPECT_EQ(Json::parse(hit.out)["cached"], true);
  }
  EXPECT_EQ(decisions_sent(server), 1);
  EXPECT_EQ(stored_entries(cache).size(), 1u);

  // clef recognises an image by its first bytes; the mock takes any raw base64.
  const std::string png =
      write_temp_file("cli_cache_pixel.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  for (int i = 0; i < 2; ++i) run_clef(ask_args(server.base_url(), cache, {"--image", png}));
  EXPECT_EQ(decisions_sent(server), 3) << "an image request is sent each time";
  EXPECT_EQ(stored_entries(cache).size(), 1u);
  for (int i = 0; i < 2; ++i)
    run_clef(ask_args(server.base_url(), cache, {"--image", png, "--cache-images"}));
  EXPECT_EQ(decisions_sent(server), 4) << "with --cache-images the second is a hit";

  // Expiry: a systemone server (the model name is the version), entries aged by 11 minutes.
  const std::string aged = fresh_cache("cli_cache_expiry");
  auto ask_model = [&](const std::string& model) {
    return run_clef({"ask", "--backend", "systemone", "--host", server.base_url(), "--cache", aged,
                     "--json", "-m", model, "--yes-no", "refund: Money back?", "x"});
  };
  server.set_models({"clef-flash", "clef-flash-latest", "clef-flash-9b"});
  ASSERT_EQ(ask_model("clef-flash-latest").code, 0);
  ASSERT_EQ(ask_model("clef-flash-9b").code, 0);
  clef::testing::edit_entries(aged, [](nlohmann::json& entry) {
    entry["created"] = entry["created"].get<long long>() - 660;
  });
  const int before = decisions_sent(server);
  EXPECT_EQ(Json::parse(ask_model("clef-flash-9b").out)["cached"], true) << "pinned: never expires";
  EXPECT_EQ(Json::parse(ask_model("clef-flash-latest").out).count("cached"), 0u)
      << "an alias is asked again after 10 minutes";
  EXPECT_EQ(decisions_sent(server) - before, 1);
}

}  // namespace
