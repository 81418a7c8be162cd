// clef batch over several hosts: --host repeated and --hosts FILE, the host named on each line
// and in the summary, a gone host worked around, a mixed fleet refused, --resume unchanged.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::batch_args;
using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::jsonl_tickets;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::write_temp_file;

TEST(CliHosts, EveryLineNamesItsHostAndAGoneHostLosesNothing) {
  FakeServer a, b;
  const std::string gone = "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port());
  const std::string hosts =
      write_temp_file("hosts.txt", "# the fleet\n" + b.base_url() + "\n\n" + gone + "\n");
  const std::string output = fresh_path("hosts_out.jsonl");
  auto r = run_clef(batch_args(a.base_url(), write_temp_file("hosts_in.jsonl", jsonl_tickets(60)),
                               output, {"--hosts", hosts, "-j", "6", "--mixed-fleet"}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::map<std::string, int> by_host;
  std::map<std::string, int> ids;
  for (const auto& line : lines_of(read_file(output))) {
    ASSERT_TRUE(line.contains("answers")) << line.dump();
    ++by_host[line.value("host", "")];
    ++ids[line["id"].dump()];
  }
  EXPECT_EQ(ids.size(), 60u);
  for (const auto& [id, count] : ids) EXPECT_EQ(count, 1) << id;
  EXPECT_EQ(by_host[a.base_url()], a.request_count());
  EXPECT_EQ(by_host[b.base_url()], b.request_count());
  EXPECT_EQ(by_host[a.base_url()] + by_host[b.base_url()], 60);
  EXPECT_EQ(by_host.count(gone), 0u);
  EXPECT_NE(r.err.find("host " + gone + ": 0 answered"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("set aside"), std::string::npos) << r.err;
}

TEST(CliHosts, AMixedFleetIsRefusedBeforeAnythingIsSent) {
  FakeServer a, b;
  b.set_model_digest("clef-flash:latest", "0123456789abcdef0123456789abcdef");
  const std::string output = fresh_path("mixed_out.jsonl");
  auto r = run_clef(batch_args(a.base_url(), write_temp_file("mixed_in.jsonl", jsonl_tickets(5)),
                               output, {"--host", b.base_url()}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("the hosts serve different models"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--mixed-fleet"), std::string::npos) << r.err;
  EXPECT_EQ(a.request_count() + b.request_count(), 0);
  auto mixed =
      run_clef(batch_args(a.base_url(), write_temp_file("mixed_in.jsonl", jsonl_tickets(5)), output,
                          {"--host", b.base_url(), "--mixed-fleet"}));
  EXPECT_EQ(mixed.code, 0) << mixed.err;
  EXPECT_EQ(a.request_count() + b.request_count(), 5);
}

TEST(CliHosts, OneHostCommandsRefuseSeveralAndAHostTwiceIsRefused) {
  FakeServer a, b;
  auto ask = run_clef({"ask", "--host", a.base_url(), "--host", b.base_url(), "--state-json",
                       "{\"t\": \"hi\"}", "--yes-no", "urgent: Is it urgent?"});
  EXPECT_EQ(ask.code, 2) << ask.err;
  EXPECT_NE(ask.err.find("only clef batch and clef eval send to several hosts"), std::string::npos)
      << ask.err;
  const std::string output = fresh_path("twice_out.jsonl");
  auto twice =
      run_clef(batch_args(a.base_url(), write_temp_file("twice_in.jsonl", jsonl_tickets(2)), output,
                          {"--host", a.base_url()}));
  EXPECT_EQ(twice.code, 2) << twice.err;
  EXPECT_NE(twice.err.find("host given twice"), std::string::npos) << twice.err;
  EXPECT_EQ(a.request_count() + b.request_count(), 0);
}

TEST(CliHosts, ResumeOverSeveralHostsRedoesOnlyWhatFailed) {
  FakeServer good, flaky;
  std::atomic<bool> failing{true};
  good.set_script([&](const clef::MockRequest&, int) -> std::optional<clef::MockReply> {
    if (!failing) return std::nullopt;
    return clef::MockReply{400, R"({"error":"bad request"})", "application/json"};
  });
  const std::string input = write_temp_file("resume_hosts_in.jsonl", jsonl_tickets(20));
  const std::string output = fresh_path("resume_hosts_out.jsonl");
  auto first = run_clef(
      batch_args(good.base_url(), input, output, {"--host", flaky.base_url(), "--mixed-fleet"}));
  EXPECT_EQ(first.code, 6) << first.err;
  const int failed = good.request_count();
  ASSERT_GT(failed, 0);
  failing = false;
  // The fleet may change between a run and its resume (here, its order): the model may not.
  auto resumed = run_clef(batch_args(flaky.base_url(), input, output,
                                     {"--host", good.base_url(), "--mixed-fleet", "--resume"}));
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  std::map<std::string, int> ids;
  for (const auto& line : lines_of(read_file(output))) {
    EXPECT_TRUE(line.contains("answers")) << line.dump();
    ++ids[line["id"].dump()];
  }
  EXPECT_EQ(ids.size(), 20u);
  for (const auto& [id, count] : ids) EXPECT_EQ(count, 1) << id;
  // Only the failed items were sent again, to either host.
  EXPECT_EQ(good.request_count() + flaky.request_count(), 20 + failed);
}

TEST(CliHosts, ResumeTakesAFleetThatGrewOrShrankButNotAnotherSingleServer) {
  FakeServer a, b, c;
  const std::string input = write_temp_file("resume_fleet_in.jsonl", jsonl_tickets(6));
  struct Step {
    std::vector<std::string> hosts;
    int code;
  };
  // One host, then two, then three, then one again: each a --resume of the same file.
  const std::string output = fresh_path("resume_fleet_out.jsonl");
  for (const Step& step :
       {Step{{a.base_url()}, 0}, Step{{a.base_url(), b.base_url()}, 0},
        Step{{a.base_url(), b.base_url(), c.base_url()}, 0}, Step{{c.base_url()}, 0}}) {
    std::vector<std::string> extra{"--mixed-fleet", "--resume"};
    for (std::size_t i = 1; i < step.hosts.size(); ++i) {
      extra.push_back("--host");
      extra.push_back(step.hosts[i]);
    }
    auto run = run_clef(batch_args(step.hosts.front(), input, output, extra));
    EXPECT_EQ(run.code, step.code) << step.hosts.size() << " host(s): " << run.err;
  }
  // One server, then another single server: two runs.
  const std::string single = fresh_path("resume_single_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(a.base_url(), input, single)).code, 0);
  auto other = run_clef(batch_args(b.base_url(), input, single, {"--resume"}));
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_NE(other.err.find("endpoint: was"), std::string::npos) << other.err;
}

TEST(CliHosts, AHostThatCannotBeReadAsWrittenIsRefusedNotReplaced) {
  FakeServer a;
  const std::string input = write_temp_file("bad_host_in.jsonl", jsonl_tickets(2));
  // Each once read as 127.0.0.1:11434 (Ollama's own fallback for an unreadable OLLAMA_HOST).
  for (const std::string bad :
       {"http://127.0.0.1:99999", "http://127.0.0.1:abc", "http://127.0.0.1:1?x=1",
        "http://127.0.0.1:1#f", "ftp://h:1", "http://", "http://127.0.0.1:1:"}) {
    auto r = run_clef(
        batch_args(a.base_url(), input, fresh_path("bad_host_out.jsonl"), {"--host", bad}));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--host"), std::string::npos) << bad << ": " << r.err;
    auto one = run_clef({"ask", "--host", bad, "--state-json", "{\"t\": 1}", "--yes-no", "u: U?"});
    EXPECT_EQ(one.code, 2) << bad << ": " << one.err;
  }
  const std::string hosts = write_temp_file("bad_hosts.txt", a.base_url() + "\nhttp://x:0\n");
  auto r = run_clef(
      batch_args(a.base_url() + "/", input, fresh_path("bad_host_out.jsonl"), {"--hosts", hosts}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("bad_hosts.txt:2"), std::string::npos) << r.err;
  // The same server written twice (a trailing slash) is one host.
  const std::string twice = write_temp_file("twice_hosts.txt", a.base_url() + "\n");
  auto dup = run_clef(
      batch_args(a.base_url() + "/", input, fresh_path("bad_host_out.jsonl"), {"--hosts", twice}));
  EXPECT_EQ(dup.code, 2) << dup.err;
  EXPECT_NE(dup.err.find("host given twice"), std::string::npos) << dup.err;
  EXPECT_EQ(a.request_count(), 0);
}

TEST(CliHosts, APasswordInAHostURLIsNeverPrinted) {
  FakeServer a, b;
  const std::string with_password = "http://user:pw_SECRET@127.0.0.1:" + std::to_string(a.port());
  const std::string output = fresh_path("password_out.jsonl");
  auto r =
      run_clef(batch_args(with_password, write_temp_file("password_in.jsonl", jsonl_tickets(8)),
                          output, {"--host", b.base_url(), "-v"}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_GT(a.request_count(), 0);
  EXPECT_EQ(r.err.find("pw_SECRET"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(output).find("pw_SECRET"), std::string::npos);
  EXPECT_NE(read_file(output).find("\"host\":\"http://127.0.0.1:" + std::to_string(a.port())),
            std::string::npos);
  // Nor in the fleet check's warning about a host it cannot reach, nor in a refusal.
  const std::string gone =
      "http://user:pw_SECRET@127.0.0.1:" + std::to_string(clef::testing::refusing_port());
  auto warned = run_clef(batch_args(gone, write_temp_file("password_in.jsonl", jsonl_tickets(2)),
                                    fresh_path("password_out2.jsonl"), {"--host", b.base_url()}));
  EXPECT_NE(warned.err.find("cannot check"), std::string::npos) << warned.err;
  EXPECT_EQ(warned.err.find("pw_SECRET"), std::string::npos) << warned.err;
  auto refused = run_clef(batch_args("http://user:pw_SECRET@127.0.0.1:0",
                                     write_temp_file("password_in.jsonl", jsonl_tickets(2)),
                                     fresh_path("password_out3.jsonl")));
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_EQ(refused.err.find("pw_SECRET"), std::string::npos) << refused.err;
}

}  // namespace
