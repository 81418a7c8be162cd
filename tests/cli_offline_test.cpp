// Record and replay: a cassette recorded against a server answers later with no network, the
// same bytes as the live run, and a request it lacks fails with its own exit code.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::jsonl_tickets;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::ServerShape;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;

std::string dead_host() {
  return "http://127.0.0.1:" + std::to_string(clef::testing::unused_port());
}

std::vector<std::string> ask_args(const std::string& host, const std::string& state,
                                  std::vector<std::string> extra) {
  std::vector<std::string> args = {"ask",      "--host",
                                   host,       "--json",
                                   "--choice", "team: Which team? | billing=Money | technical=Bugs",
                                   "--yes-no", "refund: Money back?",
                                   state};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliReplay, RecordThenReplayGivesTheSameBytesWithNoServer) {
  FakeServer server;
  const std::string cassette = fresh_path("ask.cassette.jsonl");
  auto live = run_clef(ask_args(server.base_url(), "I was charged twice.", {"--record", cassette}));
  ASSERT_EQ(live.code, 0) << live.err;
  auto again = run_clef(ask_args(server.base_url(), "Nothing works.", {"--record", cassette}));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(lines_of(read_file(cassette)).size(), 2u);
  auto replayed = run_clef(ask_args(dead_host(), "I was charged twice.", {"--replay", cassette}));
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  EXPECT_EQ(replayed.out, live.out) << "byte-identical --json output";
  auto second = run_clef(ask_args(dead_host(), "Nothing works.", {"--replay", cassette}));
  EXPECT_EQ(second.out, again.out);
  EXPECT_EQ(server.request_count(), 2) << "the replays sent nothing";
}

TEST(CliReplay, AMissHasItsOwnExitCodeAndSaysWhatMissed) {
  FakeServer server;
  const std::string cassette = fresh_path("miss.cassette.jsonl");
  ASSERT_EQ(run_clef(ask_args(server.base_url(), "recorded", {"--record", cassette})).code, 0);
  auto miss = run_clef(ask_args(dead_host(), "never recorded", {"--replay", cassette}));
  EXPECT_EQ(miss.code, 9) << miss.err;
  EXPECT_NE(miss.err.find("not_recorded"), std::string::npos) << miss.err;
  EXPECT_NE(miss.err.find("questions team, refund; state \"never recorded\""), std::string::npos)
      << miss.err;
  // Another question set misses too, even for the same state.
  auto other = run_clef({"ask", "--host", dead_host(), "--replay", cassette, "--yes-no",
                         "refund: Money back?", "recorded"});
  EXPECT_EQ(other.code, 9) << other.err;
  // A cassette that is not one is an input error, not a miss.
  auto broken = run_clef(ask_args(
      dead_host(), "recorded", {"--replay", write_temp_file("broken.cassette", "{\"key\": 1}\n")}));
  EXPECT_EQ(broken.code, 2);
  EXPECT_NE(broken.err.find("line 1"), std::string::npos) << broken.err;
  EXPECT_EQ(run_clef(ask_args(dead_host(), "x", {"--replay", cassette, "--record", cassette})).code,
            2);
}

TEST(CliReplay, BatchReplaysEveryLineAndCountsMisses) {
  FakeServer server;
  const std::string cassette = fresh_path("batch.cassette.jsonl");
  const std::string input = write_temp_file("replay_tickets.jsonl", jsonl_tickets(30));
  auto batch = [&](const std::string& host, const std::string& in, std::vector<std::string> extra) {
    const std::string out = fresh_path("replay_out.jsonl");
    std::vector<std::string> args = {
        "batch", in, "-o", out, "--host", host, "--ordered", "--yes-no", "urgent: Is it urgent?"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_clef(args);
    std::vector<Json> lines = lines_of(read_file(out));
    for (auto& line : lines) line.erase("latency_ms");  // measured, so it differs
    return std::make_pair(r, lines);
  };
  auto [live, live_lines] = batch(server.base_url(), input, {"--record", cassette, "-j", "8"});
  ASSERT_EQ(live.code, 0) << live.err;
  auto [replayed, replayed_lines] = batch(dead_host(), input, {"--replay", cassette, "-j", "8"});
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  EXPECT_EQ(replayed_lines, live_lines);
  EXPECT_EQ(server.request_count(), 30);
  const std::string more = write_temp_file("replay_more.jsonl", jsonl_tickets(32));
  auto [missing, missing_lines] = batch(dead_host(), more, {"--replay", cassette});
  EXPECT_EQ(missing.code, 9) << missing.err;
  ASSERT_EQ(missing_lines.size(), 32u);
  EXPECT_EQ(missing_lines[31]["error"]["kind"], "not_recorded");
  EXPECT_NE(missing.err.find("2 item(s) have no recording"), std::string::npos) << missing.err;
}

TEST(CliReplay, AWorkersAiCassetteHoldsNoTokenAndReplaysWithoutOne) {
  FakeServer server(ServerShape::workers_ai);
  const std::string token = write_temp_file("replay_token", "test-token\n");
  const std::string cassette = fresh_path("workers.cassette.jsonl");
  auto live = run_clef(ask_args(server.base_url(), "charged twice",
                                {"--backend", "workers-ai", "--account-id", "acc9",
                                 "--api-token-file", token, "--record", cassette}));
  ASSERT_EQ(live.code, 0) << live.err;
  const std::string recorded = read_file(cassette);
  EXPECT_EQ(recorded.find("test-token"), std::string::npos) << "no token in a cassette";
  EXPECT_NE(recorded.find("cf-ai-req-id"), std::string::npos) << "the request id is kept";
  auto replayed =
      run_clef(ask_args(dead_host(), "charged twice",
                        {"--backend", "workers-ai", "--account-id", "acc9", "--replay", cassette}));
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  EXPECT_EQ(replayed.out, live.out);
}

}  // namespace
