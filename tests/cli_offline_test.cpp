// Record and replay: a cassette recorded against a server answers later with no network, the
// same bytes as the live run, and a request it lacks fails with its own exit code.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "child_clef.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::jsonl_tickets;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::run_clef_child;
using clef::testing::ServerShape;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;

std::string dead_host() {
  return "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port());
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

int decisions_sent(const FakeServer& server) {
  int n = 0;
  for (const auto& r : server.requests()) n += r.path == "/v1/systemone";
  return n;
}

// Issue 15, item 13: a token the server echoes (in the body, in x-request-id) is scrubbed from
// the recording, the cassette is private to its owner, and a replay shows no token.
TEST(CliReplay, ARecordingHoldsNoTokenTheServerEchoesAndIsPrivate) {
  FakeServer server;
  const std::string token = "s3cret-token-4f9a1c";
  server.set_script([](const clef::MockRequest& request, int) -> std::optional<clef::MockReply> {
    if (request.path != "/v1/systemone") return std::nullopt;
    const std::string authorization = request.header("Authorization");
    const std::string echoed = authorization.substr(authorization.find(' ') + 1);
    clef::MockReply reply;
    reply.body = R"({"model":"clef-flash for )" + echoed +
                 R"(","answers":{"refund":{"type":"noul","noul":0.9}}})";
    reply.headers = {{"x-request-id", "req-" + echoed}};
    return reply;
  });
  const std::string token_file = write_temp_file("cassette_token", token + "\n");
  const std::string cassette = fresh_path("token.cassette.jsonl");
  auto ask = [](const std::string& host, std::vector<std::string> extra) {
    // The echo goes into the model's name: --any-model keeps the answer to check.
    std::vector<std::string> args = {"ask",          "--host",    host,
                                     "--json",       "--backend", "systemone",
                                     "--any-model",  "--yes-no",  "refund: Money back?",
                                     "charged twice"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(args);
  };
  auto live = ask(server.base_url(), {"--api-token-file", token_file, "--record", cassette});
  ASSERT_EQ(live.code, 0) << live.err;
  ASSERT_EQ(decisions_sent(server), 1);
  const std::string recorded = read_file(cassette);
  EXPECT_EQ(recorded.find(token), std::string::npos) << recorded;
  EXPECT_NE(recorded.find("<redacted>"), std::string::npos) << recorded;
  struct stat info {};
  ASSERT_EQ(::stat(cassette.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u) << "a cassette is created private";
  auto replayed = ask(dead_host(), {"--replay", cassette, "-v"});
  ASSERT_EQ(replayed.code, 0) << replayed.err;
  EXPECT_EQ(replayed.out.find(token), std::string::npos) << replayed.out;
  EXPECT_EQ(replayed.err.find(token), std::string::npos) << replayed.err;
}

// Issue 15, item 14: under --replay a recorded 503 with Retry-After: 20 is final: neither ask nor
// batch waits it out or sends it again (child processes with a deadline well under 20 s).
TEST(CliReplay, ARecordedThrottleIsFinalNotWaitedOut) {
  FakeServer server;
  server.set_script([](const clef::MockRequest& request, int) -> std::optional<clef::MockReply> {
    if (request.path != "/v1/systemone") return std::nullopt;
    clef::MockReply busy;
    busy.status = 503;
    busy.body = R"({"error":"server busy"})";
    busy.headers = {{"Retry-After", "20"}};
    return busy;
  });
  const std::string cassette = fresh_path("busy.cassette.jsonl");
  const std::vector<std::string> question = {"--yes-no", "urgent: Is it urgent?"};
  auto recorded = run_clef({"ask", "--host", server.base_url(), "--retries", "0", "--record",
                            cassette, "--yes-no", "urgent: Is it urgent?", "--state-json",
                            R"({"ticket":"ticket number 0"})"});
  ASSERT_EQ(recorded.code, 4) << recorded.err;
  ASSERT_EQ(lines_of(read_file(cassette)).size(), 1u);
  auto ask =
      run_clef_child({"ask", "--host", dead_host(), "--replay", cassette, "--yes-no",
                      "urgent: Is it urgent?", "--state-json", R"({"ticket":"ticket number 0"})"},
                     std::chrono::seconds(10));
  EXPECT_TRUE(ask.finished) << "ask waited out a recorded Retry-After";
  EXPECT_EQ(ask.code, 4) << ask.err;
  EXPECT_NE(ask.err.find("503"), std::string::npos) << ask.err;
  const std::string input = write_temp_file("busy_tickets.jsonl", jsonl_tickets(1));
  const std::string output = fresh_path("busy_out.jsonl");
  auto batch = run_clef_child({"batch", input, "-o", output, "--host", dead_host(), "--replay",
                               cassette, "--yes-no", "urgent: Is it urgent?"},
                              std::chrono::seconds(10));
  EXPECT_TRUE(batch.finished) << "batch paused for a recorded 503";
  EXPECT_EQ(batch.code, 6) << batch.err;
  const auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["error"]["kind"], "server_error") << lines[0].dump();
}

// Issue 15, item 15: a last line cut short (a full disk, a killed recorder) is skipped with a
// warning; the lines before it replay. A broken line in the middle still refuses the cassette.
TEST(CliReplay, ATornLastLineIsSkippedWithAWarning) {
  FakeServer server;
  const std::string cassette = fresh_path("torn.cassette.jsonl");
  ASSERT_EQ(run_clef(ask_args(server.base_url(), "first", {"--record", cassette})).code, 0);
  ASSERT_EQ(run_clef(ask_args(server.base_url(), "second", {"--record", cassette})).code, 0);
  const std::string whole = read_file(cassette);
  const std::string torn = whole.substr(0, whole.size() - 40);
  const std::string torn_path = write_temp_file("torn_cut.cassette.jsonl", torn);
  auto first = run_clef(ask_args(dead_host(), "first", {"--replay", torn_path}));
  EXPECT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.err.find("line 2"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("torn"), std::string::npos) << first.err;
  auto second = run_clef(ask_args(dead_host(), "second", {"--replay", torn_path}));
  EXPECT_EQ(second.code, 9) << second.err;
  const std::string first_line = whole.substr(0, whole.find('\n') + 1);
  const std::string middle =
      write_temp_file("torn_middle.cassette.jsonl",
                      first_line.substr(0, 30) + "\n" + whole.substr(first_line.size()));
  auto refused = run_clef(ask_args(dead_host(), "second", {"--replay", middle}));
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_NE(refused.err.find("line 1"), std::string::npos) << refused.err;
}

// Issue 15, item 15: when the cassette cannot be written (disk full) nothing more is sent — each
// request would be paid for and not recorded — and the run fails as an output failure (7).
TEST(CliReplay, ACassetteThatCannotBeWrittenStopsTheRunWithExit7) {
  FakeServer server;
  const std::string input = write_temp_file("full_tickets.jsonl", jsonl_tickets(30));
  const std::string output = fresh_path("full_out.jsonl");
  auto batch = run_clef({"batch", input, "-o", output, "--host", server.base_url(), "-j", "2",
                         "--yes-no", "urgent: Is it urgent?", "--record", "/dev/full"});
  EXPECT_EQ(batch.code, 7) << batch.err;
  EXPECT_LE(decisions_sent(server), 2) << "requests went on after the cassette failed";
  EXPECT_NE(batch.err.find("/dev/full"), std::string::npos) << batch.err;
  for (const auto& line : lines_of(read_file(output))) {
    EXPECT_FALSE(line.contains("error"))
        << "a recording failure is not an item's error: " << line.dump();
  }
  const int before = decisions_sent(server);
  auto ask = run_clef(ask_args(server.base_url(), "charged twice", {"--record", "/dev/full"}));
  EXPECT_EQ(ask.code, 7) << ask.err;
  EXPECT_NE(ask.err.find("/dev/full"), std::string::npos) << ask.err;
  EXPECT_EQ(decisions_sent(server), before + 1);
  // The decision was paid for: it is shown, though not recorded.
  EXPECT_TRUE(Json::parse(ask.out).contains("answers")) << ask.out;
}

// Issue 15, item 15: --record naming the batch's input or its output would append exchanges to
// them: refused before anything is opened.
TEST(CliReplay, RecordingIntoTheInputOrTheOutputIsRefused) {
  FakeServer server;
  const std::string tickets = jsonl_tickets(3);
  const std::string input = write_temp_file("record_into_input.jsonl", tickets);
  const std::string output = fresh_path("record_into_out.jsonl");
  auto into_input = run_clef({"batch", input, "-o", output, "--host", server.base_url(), "--yes-no",
                              "urgent: Is it urgent?", "--record", input});
  EXPECT_EQ(into_input.code, 2) << into_input.err;
  EXPECT_NE(into_input.err.find("--record"), std::string::npos) << into_input.err;
  EXPECT_EQ(read_file(input), tickets);
  auto into_output = run_clef({"batch", input, "-o", output, "--host", server.base_url(),
                               "--yes-no", "urgent: Is it urgent?", "--record", output});
  EXPECT_EQ(into_output.code, 2) << into_output.err;
  EXPECT_EQ(server.request_count(), 0);
}

// --record appends to a cassette and mends its torn last line: a file that is not one (a diary
// without a last newline, an image) was cut and appended to. Refused now, the file untouched;
// a cassette is still appended to.
TEST(CliReplay, RecordingIntoAFileThatIsNotACassetteIsRefusedAndLeavesIt) {
  FakeServer server;
  const std::string diary = write_temp_file("diary.txt", "line one\nline two, no newline");
  auto r = run_clef(ask_args(server.base_url(), "first", {"--record", diary}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("not a cassette"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(diary), "line one\nline two, no newline");
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  const std::string image = write_temp_file("not_a_cassette.png", png);
  EXPECT_EQ(run_clef(ask_args(server.base_url(), "first", {"--record", image})).code, 2);
  EXPECT_EQ(read_file(image), png);
  const std::string cassette = fresh_path("real.cassette.jsonl");
  ASSERT_EQ(run_clef(ask_args(server.base_url(), "first", {"--record", cassette})).code, 0);
  ASSERT_EQ(run_clef(ask_args(server.base_url(), "second", {"--record", cassette})).code, 0);
  EXPECT_EQ(lines_of(read_file(cassette)).size(), 2u);
  // A recording first and a user's lines after: not a cassette either.
  const std::string mixed =
      write_temp_file("mixed.cassette.jsonl", read_file(cassette) + "my data\n");
  EXPECT_EQ(run_clef(ask_args(server.base_url(), "third", {"--record", mixed})).code, 2);
  EXPECT_EQ(read_file(mixed), read_file(cassette) + "my data\n");
  EXPECT_EQ(server.request_count(), 2) << "nothing sent for a refused recording";
}

// --record names none of the files ask reads (the state, an image), however spelled, nor a
// batch's output that does not exist yet spelled another way ("out.jsonl", "./out.jsonl").
TEST(CliReplay, RecordingIntoAFileTheRunReadsIsRefusedHoweverSpelled) {
  FakeServer server;
  const std::string state = write_temp_file("record_state.txt", "I was charged twice.");
  auto from_file = run_clef(
      {"ask", "--host", server.base_url(), "--yes-no", "u: U?", "--state-file", state, "--record",
       std::filesystem::path(state).parent_path().string() + "/./record_state.txt"});
  EXPECT_EQ(from_file.code, 2) << from_file.err;
  EXPECT_NE(from_file.err.find("--state-file"), std::string::npos) << from_file.err;
  const std::string json = write_temp_file("record_state.json", R"({"t":"x"})");
  auto from_json = run_clef({"ask", "--host", server.base_url(), "--yes-no", "u: U?",
                             "--state-json", "@" + json, "--record", json});
  EXPECT_EQ(from_json.code, 2) << from_json.err;
  EXPECT_EQ(read_file(json), R"({"t":"x"})");
  // A bare name and ./name for a file not yet made, from the directory they are in.
  const std::string input = write_temp_file("record_spelled.jsonl", jsonl_tickets(2));
  const auto directory = std::filesystem::path(input).parent_path();
  const auto back = std::filesystem::current_path();
  std::filesystem::current_path(directory);
  std::filesystem::remove("spelled_out.jsonl");
  auto spelled = run_clef({"batch", input, "-o", "spelled_out.jsonl", "--host", server.base_url(),
                           "--yes-no", "u: U?", "--record", "./spelled_out.jsonl"});
  std::filesystem::current_path(back);
  EXPECT_EQ(spelled.code, 2) << spelled.err;
  EXPECT_EQ(server.request_count(), 0);
}

// Issue 15, item 15: a recorded status is range-checked: 99999999999 is a bad line, not HTTP
// 1215752191.
TEST(CliReplay, ARecordedStatusOutOfRangeIsABadLine) {
  const std::string cassette = write_temp_file(
      "status.cassette.jsonl", R"({"key":"00","status":99999999999,"headers":[],"body":"{}"})"
                               "\n");
  auto replayed = run_clef(ask_args(dead_host(), "x", {"--replay", cassette}));
  EXPECT_EQ(replayed.code, 2) << replayed.err;
  EXPECT_NE(replayed.err.find("line 1"), std::string::npos) << replayed.err;
  EXPECT_NE(replayed.err.find("status"), std::string::npos) << replayed.err;
}

}  // namespace
