// clef batch --metrics-file and --metrics-push: the Prometheus text format checked by Debian's
// promtool, pushed to a real Pushgateway on 127.0.0.1, and the numbers the run's summary prints.
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "clef/mock.hpp"
#include "clef/transport.hpp"
#include "support/child_clef.hpp"
#include "support/cli_runner.hpp"
#include "support/fake_server.hpp"
#include "support/held_answers.hpp"
#include "support/local_service.hpp"
#include "support/wait_until.hpp"

using namespace clef::testing;

namespace {

/// The value of the sample `series` (its name and labels as written) in `text`, or -1.
double sample(const std::string& text, const std::string& series) {
  const std::string start = series + " ";
  std::size_t at = text.rfind("\n" + start);
  if (at == std::string::npos && text.rfind(start, 0) == 0) at = 0;
  if (at == std::string::npos) return -1;
  at = text.find(' ', at + 1 + series.size() - 1) + 1;
  return std::strtod(text.c_str() + at, nullptr);
}

/// "N ok, F failed" and "R refused by the server" from a batch's summary line (R 0 when absent).
struct Summary {
  long ok = -1, failed = -1, refused = 0;
};
Summary summary_of(const std::string& err) {
  Summary summary;
  std::smatch match;
  if (std::regex_search(err, match, std::regex(R"(written, (\d+) ok, (\d+) failed)"))) {
    summary.ok = std::stol(match[1]);
    summary.failed = std::stol(match[2]);
  }
  if (std::regex_search(err, match, std::regex(R"((\d+) refused by the server)")))
    summary.refused = std::stol(match[1]);
  return summary;
}

/// promtool check metrics on the file: its exit code, and what it said.
std::pair<int, std::string> promtool_check(const std::string& promtool, const std::string& path) {
  const std::string log = path + ".promtool";
  const int status =
      std::system((promtool + " check metrics < '" + path + "' > '" + log + "' 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(log)};
}

std::vector<std::string> run_args(const FakeServer& server, const std::string& input,
                                  const std::string& output, std::vector<std::string> extra) {
  std::vector<std::string> args = {"batch",     input,
                                   "-o",        output,
                                   "--host",    server.base_url(),
                                   "--yes-no",  "urgent: Is it urgent?",
                                   "--retries", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST(CliMetrics, TheFilePassesPromtoolAndItsNumbersAreTheSummarys) {
  const std::string promtool = installed_program("promtool");
  if (promtool.empty()) GTEST_SKIP() << "no promtool (Debian's prometheus; .ci/run installs it)";
  FakeServer server;
  clef::MockFaults faults;
  faults.fail_rates = {{503, 0.2}, {500, 0.1}};  // refusals sent again, and failures
  faults.retry_after_seconds = 0;
  server.set_faults(faults);
  const std::string input = write_temp_file("metrics_in.jsonl", jsonl_tickets(80));
  const std::string output = fresh_path("metrics_out.jsonl");
  const std::string metrics = fresh_path("metrics.prom");
  auto r = run_clef(run_args(server, input, output,
                             {"-j", "4", "--max-retry-after", "0.05", "--metrics-file", metrics}));
  ASSERT_TRUE(r.code == 0 || r.code == 6) << r.err;
  const Summary summary = summary_of(r.err);
  ASSERT_GT(summary.failed, 0) << r.err;
  ASSERT_GT(summary.refused, 0) << r.err;

  const std::string text = read_file(metrics);
  const auto [code, said] = promtool_check(promtool, metrics);
  EXPECT_EQ(code, 0) << said << text;
  EXPECT_EQ(said, "") << "promtool's lint found something";
  EXPECT_EQ(sample(text, R"(clef_decisions_total{outcome="ok"})"), summary.ok) << text;
  EXPECT_EQ(sample(text, R"(clef_decisions_total{outcome="failed"})"), summary.failed);
  EXPECT_EQ(summary.ok + summary.failed, 80);
  EXPECT_EQ(sample(text, "clef_requests_refused_total"), summary.refused);
  EXPECT_EQ(sample(text, "clef_decisions_pending"), 0);
  EXPECT_EQ(sample(text, "clef_batch_finished"), 1);
  const std::string host = "host=\"" + server.base_url() + "\"";
  EXPECT_EQ(sample(text, "clef_host_answered_total{" + host + "}"), summary.ok);
  EXPECT_EQ(sample(text, "clef_host_failed_total{" + host + "}"), summary.failed);
  EXPECT_EQ(sample(text, "clef_host_refused_total{" + host + "}"), summary.refused);
  // Every answer's time is in the histogram, the last bucket holding them all.
  EXPECT_EQ(sample(text, "clef_decision_duration_seconds_count{" + host + "}"), summary.ok);
  EXPECT_EQ(sample(text, "clef_decision_duration_seconds_bucket{" + host + R"(,le="+Inf"})"),
            summary.ok);
  EXPECT_GT(sample(text, "clef_decision_duration_seconds_sum{" + host + "}"), 0);
  // Bucket bounds as written by hand, not with 17 digits (le="0.0050000000000000001").
  EXPECT_NE(text.find(R"(,le="0.005"})"), std::string::npos) << text;

  // An earlier run's file is clef's to replace again.
  auto again = run_clef(run_args(server, input, fresh_path("metrics_out_again.jsonl"),
                                 {"--max-retry-after", "0.05", "--metrics-file", metrics}));
  EXPECT_TRUE(again.code == 0 || again.code == 6) << again.err;
  EXPECT_EQ(sample(read_file(metrics), "clef_batch_finished"), 1);
}

TEST(CliMetrics, WhileTheRunGoesOnTheFileSaysSoAndIsNeverHalfWritten) {
  // The server holds the items after the sixth until the test has read a file that shows the
  // run under way: a file written late (its fsync waits on a busy disk) still finds it going.
  FakeServer server;
  server.set_latency(std::chrono::milliseconds(20));
  HeldAnswers held(server, 6);
  const std::string input = write_temp_file("metrics_live_in.jsonl", jsonl_tickets(30));
  const std::string output = fresh_path("metrics_live_out.jsonl");
  const std::string metrics = fresh_path("metrics_live.prom");
  const pid_t child = spawn_clef(run_args(
      server, input, output, {"-j", "2", "--metrics-file", metrics, "--metrics-interval", "0.1"}));
  ASSERT_GT(child, 0);
  double seen_pending = 0, seen_done = -1;
  wait_until(
      [&] {
        const std::string text = read_file(metrics);
        if (text.empty()) return false;
        // Replaced whole: every read is a complete exposition.
        EXPECT_EQ(text.back(), '\n');
        EXPECT_NE(text.find("clef_batch_finished "), std::string::npos) << text;
        seen_pending = std::max(seen_pending, sample(text, "clef_decisions_pending"));
        seen_done = sample(text, R"(clef_decisions_total{outcome="ok"})");
        return sample(text, "clef_batch_finished") == 0 && seen_done >= 4 && seen_pending > 0;
      },
      "a metrics file that shows the run under way");
  held.release();
  EXPECT_EQ(wait_for_exit(child), 0);
  const std::string last = read_file(metrics);
  EXPECT_EQ(sample(last, "clef_batch_finished"), 1);
  EXPECT_EQ(sample(last, R"(clef_decisions_total{outcome="ok"})"), 30);
  // Replaced again after the read that found the run under way.
  EXPECT_LT(seen_done, 30) << "the file was read while the run went on";
  // In flight, waiting, or read ahead: at least the two -j 2 sends, at most twice -j.
  EXPECT_GE(seen_pending, 2);
  EXPECT_LE(seen_pending, 4);
}

TEST(CliMetrics, APushgatewayReceivesEachShardsNumbers) {
  const std::string pushgateway = installed_program("prometheus-pushgateway");
  if (pushgateway.empty())
    GTEST_SKIP() << "no prometheus-pushgateway (the Debian package; .ci/run installs it)";
  // No persistence: Debian builds the gateway to keep /var/lib/prometheus/pushgateway.data.
  const std::string log = fresh_path("pushgateway.log");
  LocalService gateway(pushgateway,
                       {"--web.listen-address=127.0.0.1:{port}", "--persistence.file="}, log);
  ASSERT_TRUE(gateway.ready()) << read_file(log);
  FakeServer server;
  const std::string input = write_temp_file("metrics_push_in.jsonl", jsonl_tickets(40));
  long ok[2] = {0, 0};
  for (int shard = 0; shard < 2; ++shard) {
    const std::string output = fresh_path("metrics_push_out_" + std::to_string(shard) + ".jsonl");
    auto r = run_clef(run_args(server, input, output,
                               {"--shard", std::to_string(shard) + "/2", "--metrics-push",
                                gateway.url(), "--metrics-job", "nightly_routing"}));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
    ok[shard] = summary_of(r.err).ok;
  }
  EXPECT_EQ(ok[0] + ok[1], 40);
  clef::HttpRequest get;
  get.method = "GET";
  get.url = gateway.url() + "/metrics";
  auto scraped = clef::make_curl_transport()->send(get);
  ASSERT_TRUE(scraped) << scraped.error().message;
  ASSERT_EQ(scraped->status, 200);
  // The gateway sorts the labels: the grouping key's job and shard, then the metric's own.
  for (int shard = 0; shard < 2; ++shard) {
    const std::string labels =
        R"(instance="",job="nightly_routing",outcome="ok",shard=")" + std::to_string(shard) + "\"";
    EXPECT_EQ(sample(scraped->body, "clef_decisions_total{" + labels + "}"), ok[shard])
        << scraped->body;
  }

  // A gateway that is gone: a warning, once; the run and its exit code are the same.
  gateway.stop();
  const std::string output = fresh_path("metrics_push_gone.jsonl");
  auto gone = run_clef(run_args(server, input, output,
                                {"--metrics-push", gateway.url(), "--metrics-interval", "0.1"}));
  EXPECT_EQ(gone.code, 0) << gone.err;
  EXPECT_EQ(lines_of(read_file(output)).size(), 40u);
  const auto first = gone.err.find("cannot push the metrics to " + gateway.url());
  EXPECT_NE(first, std::string::npos) << gone.err;
  EXPECT_EQ(gone.err.find("cannot push the metrics", first + 1), std::string::npos) << gone.err;
}

TEST(CliMetrics, BadTargetsAreRefusedBeforeAnythingIsSent) {
  FakeServer server;
  const std::string input = write_temp_file("metrics_bad_in.jsonl", jsonl_tickets(3));
  const std::string output = fresh_path("metrics_bad_out.jsonl");
  // Each export replaces the file whole: a FIFO, a device or a link would be replaced by one.
  const std::string fifo = fresh_path("metrics_bad.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = fresh_path("metrics_bad.link");
  ASSERT_EQ(::symlink(input.c_str(), link.c_str()), 0);
  // A file of the user's: the export would replace it whole.
  const std::string notes = write_temp_file("metrics_bad_notes.prom", "my own notes\n");
  for (const auto& [flags, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--metrics-push", "ftp://127.0.0.1:9091"}, "--metrics-push"},
           {{"--metrics-push", "http://127.0.0.1:9091/?x=1"}, "--metrics-push"},
           {{"--metrics-push", "http://127.0.0.1:1", "--metrics-job", "a/b"}, "--metrics-job"},
           {{"--metrics-file", "m.prom", "--metrics-interval", "0"}, "--metrics-interval"},
           {{"--metrics-file", "m.prom", "--metrics-interval", "nan"}, "--metrics-interval"},
           {{"--metrics-push", "http://127.0.0.1:1", "--metrics-job", ".."}, "--metrics-job"},
           {{"--metrics-file", fifo}, "not a regular file"},
           {{"--metrics-file", link}, "not a regular file"},
           {{"--metrics-file", "/dev/null"}, "not a regular file"},
           {{"--metrics-file", notes}, "holds something other than clef's metrics"},
           {{"--metrics-file", input}, "--metrics-file"},
           {{"--metrics-file", output}, "--metrics-file"},
           {{"--metrics-file", output + ".clef-run.json"}, "the run record"}}) {
    auto r = run_clef(run_args(server, input, output, flags));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  EXPECT_EQ(server.requests().size(), 0u);
  EXPECT_TRUE(S_ISFIFO([&] {
    struct stat info {};
    ::lstat(fifo.c_str(), &info);
    return info.st_mode;
  }()))
      << "the FIFO is still a FIFO";
  EXPECT_EQ(read_file(notes), "my own notes\n");
}

TEST(CliMetrics, AGatewayThatNeverAnswersHoldsNothingUp) {
  // A socket that listens and never accepts: the kernel completes each connection, and nothing
  // ever answers.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 64), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string silent = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  FakeServer server;
  const std::string input = write_temp_file("metrics_silent_in.jsonl", jsonl_tickets(20));
  const std::string output = fresh_path("metrics_silent_out.jsonl");
  // The same run without the push, for how long a run takes on this machine now.
  const auto plain = run_clef_child(
      run_args(server, input, fresh_path("metrics_plain_out.jsonl"), {"--metrics-interval", "0.2"}),
      std::chrono::seconds(60));
  ASSERT_TRUE(plain.finished);
  auto r = run_clef_child(
      run_args(server, input, output, {"--metrics-push", silent, "--metrics-interval", "0.2"}),
      std::chrono::seconds(60));
  ::close(listener);
  ASSERT_TRUE(r.finished);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines_of(read_file(output)).size(), 20u);
  // The last push gives up after 2 s; waiting for the push under way (5 s) would take longer.
  EXPECT_LT(r.elapsed, plain.elapsed + std::chrono::milliseconds(3500)) << r.err;
  const auto first = r.err.find("cannot push the metrics");
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cannot push the metrics", first + 1), std::string::npos) << r.err;
}

// A gateway behind something that moved answers 301: the warning says where it leads and that
// clef follows no redirect (it said "HTTP 301: " and nothing more).
TEST(CliMetrics, AGatewayThatRedirectsIsSaidWithWhereItLeads) {
  httplib::Server moved;
  moved.Put(".*", [](const httplib::Request&, httplib::Response& res) {
    res.status = 301;
    res.set_header("Location", "http://127.0.0.1:1/elsewhere");
  });
  const int port = moved.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { moved.listen_after_bind(); });
  wait_until([&] { return moved.is_running(); }, "the gateway to listen");
  FakeServer server;
  const std::string input = write_temp_file("metrics_moved_in.jsonl", jsonl_tickets(5));
  auto r = run_clef(run_args(server, input, fresh_path("metrics_moved_out.jsonl"),
                             {"--metrics-push", "http://127.0.0.1:" + std::to_string(port)}));
  moved.stop();
  thread.join();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("HTTP 301, a redirect to http://127.0.0.1:1/elsewhere (clef follows none"),
            std::string::npos)
      << r.err;
}
