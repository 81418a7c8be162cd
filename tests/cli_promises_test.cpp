// What the README promises of `clef batch` and `clef ask` that nothing ran before (issue 16):
// --dedupe with a failed first item and --resume, a second signal, throttling through the
// command line, the yes/no verdict at its thresholds, and --resume refusing another run.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "child_clef.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"
#include "held_answers.hpp"
#include "wait_until.hpp"

namespace {

using clef::testing::batch_args;
using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::HeldAnswers;
using clef::testing::jsonl_tickets;
using clef::testing::lines_by_id;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::Scripted;
using clef::testing::spawn_clef;
using clef::testing::wait_for_exit;
using clef::testing::wait_until;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST(CliPromises, DedupeCopiesAFailedFirstAndResumeRedoesBoth) {
  // "a duplicate's line is the first's line under its own id": an error line too, counted as a
  // failure; --resume then sends the state once more and both ids end up answered.
  FakeServer server;
  std::atomic<bool> failing{true};
  server.set_script([&](const auto&, int) -> std::optional<Scripted> {
    if (failing) return Scripted{500, R"({"error":"model runner crashed"})"};
    return std::nullopt;
  });
  const std::string input =
      write_temp_file("dedupe_fail.jsonl",
                      "{\"id\":\"a\",\"state\":\"same\"}\n{\"id\":\"b\",\"state\":\"same\"}\n");
  const std::string output = fresh_path("dedupe_fail_out.jsonl");
  auto first = run_clef(batch_args(server.base_url(), input, output, {"--dedupe", "--ordered"}));
  EXPECT_EQ(first.code, 6) << first.err;
  EXPECT_NE(first.err.find("2 written, 0 ok, 2 failed"), std::string::npos) << first.err;
  auto lines = lines_by_id(output);
  EXPECT_EQ(lines["a"]["error"]["kind"], "server_error");
  EXPECT_EQ(lines["b"]["duplicate_of"], "a");
  EXPECT_EQ(lines["b"]["error"], lines["a"]["error"]);
  EXPECT_EQ(server.request_count(), 4);  // one state: its first attempt and 3 retries

  failing = false;
  auto resumed =
      run_clef(batch_args(server.base_url(), input, output, {"--dedupe", "--ordered", "--resume"}));
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(server.request_count(), 5);  // the state once more, not once per id
  lines = lines_by_id(output);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines["a"]["answers"]["urgent"]["status"], "ok");
  EXPECT_EQ(lines["b"]["answers"], lines["a"]["answers"]);
}

TEST(CliPromises, AnInterruptIsSaidAtOnceAndTheItemsInFlightFinish) {
  // The wait for the requests in flight lasts as long as the server takes: the first signal is
  // answered on stderr at once, not after that wait, and the four in flight are then written.
  // The server holds its answers until the test has read that: said first, by construction.
  FakeServer server;
  HeldAnswers held(server, 0);
  const std::string input = write_temp_file("said_at_once.jsonl", jsonl_tickets(12));
  const std::string output = fresh_path("said_at_once_out.jsonl");
  const std::string err = fresh_path("said_at_once_err.txt");
  const pid_t child =
      spawn_clef(batch_args(server.base_url(), input, output, {"-j", "4"}), "", err);
  if (!wait_until([&] { return held.waiting() >= 4; }, "4 requests in flight")) {
    ::kill(child, SIGKILL);
    wait_for_exit(child);
    return;
  }
  ::kill(child, SIGINT);
  EXPECT_TRUE(wait_until(
      [&] { return read_file(err).find("interrupted: nothing new starts") != std::string::npos; },
      "the interrupt said on stderr while the requests in flight wait"))
      << read_file(err);
  held.release();
  EXPECT_EQ(wait_for_exit(child), 130) << read_file(err);
  EXPECT_EQ(server.request_count(), 4);
  EXPECT_EQ(lines_of(read_file(output)).size(), 4u) << read_file(output);
}

TEST(CliPromises, ASecondSignalAbortsTheItemsInFlightAndResumeRedoesThem) {
  // "On SIGINT or SIGTERM nothing new starts, the items in flight finish…; a second signal
  // aborts them (they are left out)": their ids are absent, and --resume decides them.
  FakeServer server;
  HeldAnswers held(server, 0);  // the four in flight are never answered before the signals
  const int n = 12;
  const std::string input = write_temp_file("second_signal.jsonl", jsonl_tickets(n));
  const std::string output = fresh_path("second_signal_out.jsonl");
  const std::string err = fresh_path("second_signal_err.txt");
  const auto args = batch_args(server.base_url(), input, output, {"-j", "4", "--dedupe"});
  const pid_t child = spawn_clef(args, "", err);
  if (!wait_until([&] { return held.waiting() >= 4; }, "4 requests in flight")) {
    ::kill(child, SIGKILL);
    wait_for_exit(child);
    return;
  }
  // Two different signals, so the second cannot merge into the first while it is pending;
  // Linux delivers the lower number, SIGINT, first.
  ::kill(child, SIGINT);   // nothing new starts…
  ::kill(child, SIGTERM);  // …and the four in flight are aborted, not waited out
  EXPECT_EQ(wait_for_exit(child), 130) << read_file(err);
  EXPECT_EQ(server.request_count(), 4);  // nothing was started after the first signal
  EXPECT_TRUE(lines_of(read_file(output)).empty()) << read_file(output);

  held.release();
  auto resumed = run_clef(batch_args(server.base_url(), input, output, {"-j", "4", "--resume"}));
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  const auto lines = lines_by_id(output);
  EXPECT_EQ(lines.size(), static_cast<std::size_t>(n));
  for (const auto& [id, line] : lines) EXPECT_EQ(line["answers"]["urgent"]["status"], "ok") << id;
}

TEST(CliPromises, A429PausesEveryWorkerNotOnlyItsOwn) {
  // "A 429 or 503 pauses every worker for Retry-After", not only the one that got it.
  FakeServer server;
  std::mutex mutex;
  std::vector<Clock::time_point> arrivals;
  std::optional<Clock::time_point> refused_at;
  server.set_script([&](const auto&, int call) -> std::optional<Scripted> {
    std::lock_guard<std::mutex> lock(mutex);
    arrivals.push_back(Clock::now());
    if (call == 20) {
      refused_at = Clock::now();
      return Scripted{429, R"({"error":"slow down"})", "application/json", {{"Retry-After", "1"}}};
    }
    return std::nullopt;
  });
  const std::string output = fresh_path("pause_all_out.jsonl");
  auto r =
      run_clef(batch_args(server.base_url(), write_temp_file("pause_all.jsonl", jsonl_tickets(400)),
                          output, {"-j", "4"}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("1 refused by the server (429/503)"), std::string::npos) << r.err;
  EXPECT_EQ(lines_of(read_file(output)).size(), 400u);
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_TRUE(refused_at);
  // Until the client has read the 429 (a few ms, more on a loaded or sanitized run) the other
  // workers go on; after that nothing starts until the second has passed: the arrivals after
  // the refusal have a gap of about a second in them, soon after it. Without the batch-wide
  // pause, 379 arrived in that second and no gap was longer than a few ms. (Times are taken
  // between arrivals, not from the refusal: a reply written late by a busy server is not a
  // request started during the pause.)
  std::sort(arrivals.begin(), arrivals.end());
  const auto after = std::upper_bound(arrivals.begin(), arrivals.end(), *refused_at);
  ASSERT_NE(after, arrivals.end());
  auto widest = after;  // the arrival that ends the widest gap
  Clock::duration gap{};
  for (auto at = after; at != arrivals.end(); ++at) {
    const Clock::duration before = *at - *(at - 1);
    if (before > gap) gap = before, widest = at;
  }
  EXPECT_GE(gap, 900ms) << "no pause after the 429: the widest gap was "
                        << std::chrono::duration_cast<std::chrono::milliseconds>(gap).count()
                        << " ms";
  EXPECT_LE(widest - after, 40) << "requests went on arriving before the pause began";
}

TEST(CliPromises, ThrottlingPastItsBudgetIsARateLimitedLineAndResumeRedoesIt) {
  FakeServer server;
  std::atomic<bool> throttling{true};
  server.set_script([&](const auto&, int) -> std::optional<Scripted> {
    if (!throttling) return std::nullopt;
    return Scripted{429, R"({"error":"slow down"})", "application/json", {{"Retry-After", "0"}}};
  });
  const std::string input = write_temp_file("budget.jsonl", jsonl_tickets(3));
  const std::string output = fresh_path("budget_out.jsonl");
  auto r = run_clef(
      batch_args(server.base_url(), input, output, {"--throttle-budget", "0.2", "--ordered"}));
  EXPECT_EQ(r.code, 6) << r.err;
  auto lines = lines_by_id(output);
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& [id, line] : lines) EXPECT_EQ(line["error"]["kind"], "rate_limited") << id;
  throttling = false;
  auto resumed = run_clef(batch_args(server.base_url(), input, output, {"--resume"}));
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  for (const auto& [id, line] : lines_by_id(output))
    EXPECT_EQ(line["answers"]["urgent"]["status"], "ok") << id;
}

TEST(CliPromises, RateCapsRequestsPerSecond) {
  // --rate 20: ten requests are sent over 9 intervals of 50 ms, however fast the server is.
  FakeServer server;
  std::mutex mutex;
  std::vector<Clock::time_point> arrivals;
  server.set_script([&](const auto&, int) -> std::optional<Scripted> {
    std::lock_guard<std::mutex> lock(mutex);
    arrivals.push_back(Clock::now());
    return std::nullopt;
  });
  auto r = run_clef(batch_args(server.base_url(), write_temp_file("rate.jsonl", jsonl_tickets(10)),
                               fresh_path("rate_out.jsonl"), {"--rate", "20", "-j", "8"}));
  EXPECT_EQ(r.code, 0) << r.err;
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(arrivals.size(), 10u);
  EXPECT_GE(arrivals.back() - arrivals.front(),
            400ms);  // 450 ms less arrival jitter; uncapped: ~5 ms
}

TEST(CliPromises, TheYesNoVerdictAtExactlyItsThresholds) {
  // "yes at P(true) >= 0.7, no at <= 0.3, unknown between".
  FakeServer server;
  std::atomic<int> at{0};
  const double p[] = {0.7, 0.3, 0.6999, 0.3001};
  server.set_script([&](const auto&, int) -> std::optional<Scripted> {
    return Scripted{200, R"({"model":"clef-flash","answers":{"u":{"type":"noul","noul":)" +
                             std::to_string(p[at.load()]) + "}}}"};
  });
  const char* expected[] = {"yes", "no", "unknown", "unknown"};
  for (int i = 0; i < 4; ++i) {
    at = i;
    auto r = run_clef(
        {"ask", "x", "--yes-no", "u: Urgent?", "--host", server.base_url(), "--format", "values"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, std::string(expected[i]) + "\n") << p[i];
  }
}

TEST(CliPromises, ResumeRefusesAnotherHostBackendOrIdField) {
  FakeServer server, other;
  const std::string input = write_temp_file("refuse_resume.jsonl", jsonl_tickets(3));
  const std::string output = fresh_path("refuse_resume_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), input, output)).code, 0);
  const std::string before = read_file(output);
  auto host = run_clef(batch_args(other.base_url(), input, output, {"--resume"}));
  EXPECT_EQ(host.code, 2);
  EXPECT_NE(host.err.find("endpoint: was"), std::string::npos) << host.err;
  auto backend = run_clef(
      batch_args(server.base_url(), input, output, {"--resume", "--backend", "systemone"}));
  EXPECT_EQ(backend.code, 2);
  EXPECT_NE(backend.err.find("backend: was \"ollama\", now \"systemone\""), std::string::npos)
      << backend.err;
  auto id_field =
      run_clef(batch_args(server.base_url(), input, output, {"--resume", "--id-field", "state"}));
  EXPECT_EQ(id_field.code, 2);
  EXPECT_NE(id_field.err.find("id_field: was \"id\", now \"state\""), std::string::npos)
      << id_field.err;
  EXPECT_EQ(read_file(output), before);
  EXPECT_EQ(other.request_count(), 0);
}

}  // namespace
