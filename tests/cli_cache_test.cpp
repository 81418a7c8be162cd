// --cache against a local server: a hit sends nothing (the server's log proves it), and any
// change of request, model or model digest is a miss.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "clef/cache.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
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
  (void)clef::clear_cache(path);
  return path;
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
  FakeServer server;
  server.set_models({"plain"});  // /api/tags lists only tagged names: no digest for "plain"
  const std::string cache = fresh_cache("cli_cache_off");
  auto r = run_clef({"ask", "--host", server.base_url(), "--cache", cache, "-m", "plain",
                     "--yes-no", "refund: Money back?", "x"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("the cache is off for this run"), std::string::npos) << r.err;
  EXPECT_EQ(clef::cache_stats(cache)->entries, 0u);
}

}  // namespace
