// `clef mock` (the clef-mock executable) as a CI job starts it: a busy port, a rules file RE2
// refuses, a model named without a tag. Each run is a child process with a deadline.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "clef/cassette.hpp"
#include "clef/mock.hpp"
#include "clef/transport.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

#ifdef CLEF_MOCK_EXE

class MockProcess {
 public:
  explicit MockProcess(const std::vector<std::string>& args) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return;
    m_pid = ::fork();
    if (m_pid == 0) {
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      std::vector<std::string> storage = {CLEF_MOCK_EXE};
      storage.insert(storage.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& arg : storage) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(CLEF_MOCK_EXE, argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    m_out = out[0];
    m_err = err[0];
  }
  ~MockProcess() {
    if (m_pid > 0 && !m_reaped) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
    if (m_out >= 0) ::close(m_out);
    if (m_err >= 0) ::close(m_err);
  }
  MockProcess(const MockProcess&) = delete;
  MockProcess& operator=(const MockProcess&) = delete;

  /// The first line of stdout (its URL), waiting at most `within`.
  std::string first_line(std::chrono::milliseconds within) {
    const auto until = Clock::now() + within;
    while (m_stdout.find('\n') == std::string::npos && read_some(until)) {
    }
    return m_stdout.substr(0, m_stdout.find('\n'));
  }

  /// The exit code once the process has exited (-1: still running after `within`, then
  /// killed; -2: killed by a signal).
  int exit_code(std::chrono::milliseconds within) {
    const auto until = Clock::now() + within;
    while (read_some(until)) {
    }
    if (Clock::now() >= until) ::kill(m_pid, SIGKILL);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    m_reaped = true;
    if (Clock::now() >= until) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
  }

  void terminate() { ::kill(m_pid, SIGTERM); }
  const std::string& out() const { return m_stdout; }
  const std::string& err() const { return m_stderr; }

 private:
  /// Reads what either pipe has; false at the deadline or when both are closed.
  bool read_some(Clock::time_point until) {
    pollfd fds[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
    if (fds[0].fd < 0 && fds[1].fd < 0) return false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0 || ::poll(fds, 2, static_cast<int>(left)) <= 0) return false;
    std::string* sinks[2] = {&m_stdout, &m_stderr};
    int* owners[2] = {&m_out, &m_err};
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else {
        ::close(*owners[i]);
        *owners[i] = -1;
      }
    }
    return true;
  }

  pid_t m_pid = -1;
  int m_out = -1;
  int m_err = -1;
  bool m_reaped = false;
  std::string m_stdout, m_stderr;
};

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Item 5: `clef mock --port P` on a busy port started anyway and shared P with the old mock.
TEST(MockCli, ABusyPortExitsWith2) {
  clef::MockServer running;
  MockProcess second({"--port", std::to_string(running.port())});
  EXPECT_EQ(second.exit_code(10s), 2) << second.err();
  EXPECT_NE(second.err().find("127.0.0.1:" + std::to_string(running.port())), std::string::npos)
      << second.err();
  EXPECT_NE(second.err().find("in use"), std::string::npos) << second.err();
}

// CLI11's Range lets "nan" through: a model flaw of nan would have been no flaw at all.
TEST(MockCli, NumberFlagsMustBeFiniteNumbers) {
  for (const char* flag : {"--noise", "--position-bias", "--drop-rate", "--rate-limit"}) {
    MockProcess mock({flag, "nan"});
    EXPECT_EQ(mock.exit_code(10s), 2) << flag << ": " << mock.err();
    EXPECT_NE(mock.err().find("not a finite number"), std::string::npos) << mock.err();
  }
  // Decimal only: strtod reads "0x10" as 16.
  MockProcess hex({"--rate-limit", "0x10"});
  EXPECT_EQ(hex.exit_code(10s), 2) << hex.err();
  EXPECT_NE(hex.err().find("not a decimal number: 0x10"), std::string::npos) << hex.err();
}

// Items 1-2: ECMAScript syntax RE2 does not have is refused before serving, naming the rule.
TEST(MockCli, ARulesFileRE2CannotRunIsRefused) {
  const std::string backreference =
      write_file("mock_cli_backref.json",
                 R"({"rules": [{"question": "q", "match": "(\\w)\\1", "answer": "yes"}]})");
  MockProcess refused({"--rules", backreference});
  EXPECT_EQ(refused.exit_code(10s), 2) << refused.err();
  EXPECT_NE(refused.err().find("rules[0]"), std::string::npos) << refused.err();
  EXPECT_NE(refused.err().find("RE2"), std::string::npos) << refused.err();

  const std::string huge =
      write_file("mock_cli_huge_rules.json", R"({"rules": [])" + std::string(2u << 20, ' ') + "}");
  MockProcess too_big({"--rules", huge});
  EXPECT_EQ(too_big.exit_code(10s), 2) << too_big.err();
  EXPECT_NE(too_big.err().find("at most 1048576"), std::string::npos) << too_big.err();
}

// Item 6: `--models clef` listed nothing in /api/tags and did not serve clef:latest.
TEST(MockCli, ServesAnUntaggedModelAsLatest) {
  MockProcess mock({"--port", "0", "--models", "clef"});
  const std::string url = mock.first_line(10s);
  ASSERT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << url << mock.err();
  clef::HttpRequest tags;
  tags.method = "GET";
  tags.url = url + "/api/tags";
  auto response = clef::make_curl_transport()->send(tags);
  ASSERT_TRUE(response) << response.error().to_string();
  const auto json = nlohmann::json::parse(response->body);
  ASSERT_EQ(json["models"].size(), 2u) << response->body;
  EXPECT_EQ(json["models"][0]["name"], "clef:latest");
  mock.terminate();
  EXPECT_EQ(mock.exit_code(10s), 0) << mock.err();
}

/// POSTs `body` to `url` + `path` (with `token` as a Bearer token when given).
clef::Result<clef::HttpResponse> post(const std::string& url, const std::string& body,
                                      const std::string& path = "/v1/systemone",
                                      const std::string& token = {}) {
  clef::HttpRequest request;
  request.url = url + path;
  request.body = body;
  request.headers = {{"Content-Type", "application/json"}};
  if (!token.empty()) request.headers.emplace_back("Authorization", "Bearer " + token);
  return clef::make_curl_transport()->send(request);
}

std::string decision_body(int n) {
  return R"({"model":"clef-flash","state":"ticket )" + std::to_string(n) +
         R"(","questions":{"u":{"type":"noul","instructions":"Urgent?"}}})";
}

// From a hostile pass: a rules file that is not there, and a log that is a directory, say why.
TEST(MockCli, AFileItCannotUseSaysWhy) {
  MockProcess missing({"--rules", "/nonexistent/rules.json"});
  EXPECT_EQ(missing.exit_code(10s), 2) << missing.err();
  EXPECT_NE(missing.err().find("No such file or directory"), std::string::npos) << missing.err();
  MockProcess directory({"--log", ::testing::TempDir()});
  EXPECT_EQ(directory.exit_code(10s), 2) << directory.err();
  EXPECT_NE(directory.err().find("Is a directory"), std::string::npos) << directory.err();
}

// From a hostile pass: SIGTERM waited out every request's --latency (10 minutes at 600000).
TEST(MockCli, SigtermDoesNotWaitOutTheLatencyOfRequestsInFlight) {
  const std::string log = write_file("latency_log.jsonl", "");
  MockProcess mock({"--port", "0", "--latency", "60000", "--log", log});
  const std::string url = mock.first_line(10s);
  ASSERT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << url << mock.err();
  std::thread waiting([&] { (void)post(url, decision_body(1)); });
  // The request is in: the mock logs it before its model time.
  const auto until = Clock::now() + 10s;
  while (Clock::now() < until) {
    std::ifstream in(log);
    std::string line;
    if (std::getline(in, line)) break;
    std::this_thread::sleep_for(10ms);  // a poll of the log, bounded by `until`
  }
  const auto signalled = Clock::now();
  mock.terminate();
  EXPECT_EQ(mock.exit_code(10s), 0) << mock.err();
  EXPECT_LT(Clock::now() - signalled, 3s);
  waiting.join();
}

/// What 40 decisions got from `clef mock ARGS`: '.' a 200, '5' a 503, '4' a 429, 'x' no response.
std::string outcomes(const std::vector<std::string>& args, std::string* retry_after = nullptr) {
  std::vector<std::string> all = {"--port", "0"};
  all.insert(all.end(), args.begin(), args.end());
  MockProcess mock(all);
  const std::string url = mock.first_line(10s);
  EXPECT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << url << mock.err();
  std::string pattern;
  for (int i = 0; i < 40; ++i) {
    auto response = post(url, decision_body(i));
    if (!response) {
      pattern += 'x';
      continue;
    }
    pattern += response->status == 200 ? '.' : response->status == 503 ? '5' : '4';
    if (retry_after && response->status != 200) *retry_after = response->header("retry-after");
  }
  mock.terminate();
  EXPECT_EQ(mock.exit_code(10s), 0) << mock.err();
  return pattern;
}

// Issue 16, promise 1: the fault flags as a CI job passes them, through the executable.
TEST(MockCli, FaultFlagsFromTheCommandLine) {
  std::string retry_after;
  const std::string seeded = outcomes(
      {"--fail-rate", "503:0.4,429:0.2", "--retry-after", "7", "--seed", "11"}, &retry_after);
  EXPECT_EQ(seeded,
            outcomes({"--fail-rate", "503:0.4,429:0.2", "--retry-after", "7", "--seed", "11"}))
      << "the same seed fails the same requests";
  EXPECT_NE(seeded, outcomes({"--fail-rate", "503:0.4,429:0.2", "--seed", "12"}));
  EXPECT_NE(seeded.find('5'), std::string::npos) << seeded;
  EXPECT_NE(seeded.find('4'), std::string::npos) << seeded;
  EXPECT_NE(seeded.find('.'), std::string::npos) << seeded;
  EXPECT_EQ(retry_after, "7");
  const std::string dropped = outcomes({"--drop-rate", "0.5", "--seed", "3"});
  EXPECT_NE(dropped.find('x'), std::string::npos) << dropped;
  EXPECT_NE(dropped.find('.'), std::string::npos) << dropped;
  EXPECT_EQ(outcomes({}), std::string(40, '.'));
  // A token bucket of 5 a second: the first second's five pass, then 429s with Retry-After: 1
  // (40 requests take well under a second here; a slow machine may refill a token or two).
  std::string limited_retry_after;
  const std::string limited = outcomes({"--rate-limit", "5"}, &limited_retry_after);
  EXPECT_EQ(limited.substr(0, 6), ".....4") << limited;
  EXPECT_LE(std::count(limited.begin(), limited.end(), '.'), 9) << limited;
  EXPECT_EQ(limited_retry_after, "1");
  MockProcess bad({"--fail-rate", "503:0.9,429:0.9"});  // shares past 1
  EXPECT_EQ(bad.exit_code(10s), 2) << bad.err();
}

TEST(MockCli, ProfilesQuotaLatencyAndCassetteFromTheCommandLine) {
  // --profile workers-ai with --quota-exhausted: Workers AI's envelope and code 4006.
  MockProcess workers({"--port", "0", "--profile", "workers-ai", "--quota-exhausted"});
  const std::string workers_url = workers.first_line(10s);
  auto quota = post(workers_url, decision_body(1),
                    "/client/v4/accounts/acc/ai/run/@cf/cloudflare/clef-flash", "test-token");
  ASSERT_TRUE(quota) << quota.error().to_string();
  EXPECT_EQ(quota->status, 429);
  const auto envelope = nlohmann::json::parse(quota->body);
  EXPECT_EQ(envelope["success"], false);
  EXPECT_EQ(envelope["errors"][0]["code"], 4006);
  workers.terminate();
  EXPECT_EQ(workers.exit_code(10s), 0);

  // --latency: the answer comes no sooner than asked.
  MockProcess slow({"--port", "0", "--latency", "300"});
  const std::string slow_url = slow.first_line(10s);
  const auto started = Clock::now();
  auto answered = post(slow_url, decision_body(2));
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->status, 200);
  EXPECT_GE(Clock::now() - started, 300ms);
  slow.terminate();
  EXPECT_EQ(slow.exit_code(10s), 0);

  // --cassette: a recorded answer comes back for its request, byte for byte.
  const std::string body = decision_body(3);
  clef::HttpRequest request;
  request.url = "http://mock/v1/systemone";
  request.body = body;
  const std::string cassette = write_file(
      "mock_cli_cassette.jsonl",
      nlohmann::json(
          {{"key", clef::exchange_key("ollama", request)},
           {"status", 200},
           {"headers", nlohmann::json::array({{"content-type", "application/json"}})},
           {"body", R"({"model":"clef-flash","answers":{"u":{"type":"noul","noul":0.125}}})"}})
              .dump() +
          "\n");
  MockProcess replaying({"--port", "0", "--cassette", cassette});
  const std::string replay_url = replaying.first_line(10s);
  auto replayed = post(replay_url, body);
  ASSERT_TRUE(replayed);
  EXPECT_EQ(replayed->body,
            R"({"model":"clef-flash","answers":{"u":{"type":"noul","noul":0.125}}})");
  replaying.terminate();
  EXPECT_EQ(replaying.exit_code(10s), 0);
}

const char* const workers_route = "/client/v4/accounts/acc/ai/run/@cf/cloudflare/clef-flash";

/// True when `response` is Workers AI's 401: its envelope with code 10000.
::testing::AssertionResult is_workers_401(const clef::Result<clef::HttpResponse>& response) {
  if (!response) return ::testing::AssertionFailure() << response.error().to_string();
  const auto body = nlohmann::json::parse(response->body, nullptr, false);
  if (response->status != 401 || body.is_discarded() || body["success"] != false ||
      body["errors"][0]["code"] != 10000) {
    return ::testing::AssertionFailure() << response->status << " " << response->body;
  }
  return ::testing::AssertionSuccess();
}

// Issue 18: `clef mock --profile workers-ai` took only the Bearer token "test-token", which
// neither --help nor the README said; a user's first call with their own token got 401.
TEST(MockCli, WorkersAiTakesAnyTokenUnlessTokenNamesOne) {
  MockProcess any({"--port", "0", "--profile", "workers-ai"});
  const std::string any_url = any.first_line(10s);
  ASSERT_EQ(any_url.rfind("http://127.0.0.1:", 0), 0u) << any_url << any.err();
  auto answered = post(any_url, decision_body(1), workers_route, "my-own-cloudflare-token");
  ASSERT_TRUE(answered) << answered.error().to_string();
  EXPECT_EQ(answered->status, 200) << answered->body;
  EXPECT_TRUE(is_workers_401(post(any_url, decision_body(2), workers_route)))
      << "no Authorization header";
  any.terminate();
  EXPECT_EQ(any.exit_code(10s), 0) << any.err();

  MockProcess one({"--port", "0", "--profile", "workers-ai", "--token", "s3cret"});
  const std::string one_url = one.first_line(10s);
  ASSERT_EQ(one_url.rfind("http://127.0.0.1:", 0), 0u) << one_url << one.err();
  EXPECT_TRUE(is_workers_401(post(one_url, decision_body(3), workers_route, "other")));
  EXPECT_TRUE(is_workers_401(post(one_url, decision_body(4), workers_route)));
  auto accepted = post(one_url, decision_body(5), workers_route, "s3cret");
  ASSERT_TRUE(accepted) << accepted.error().to_string();
  EXPECT_EQ(accepted->status, 200) << accepted->body;
  one.terminate();
  EXPECT_EQ(one.exit_code(10s), 0) << one.err();
}

TEST(MockCli, TokenIsDocumentedAndRefusedWhereNoTokenIsChecked) {
  MockProcess help({"--help"});
  EXPECT_EQ(help.exit_code(10s), 0) << help.err();
  EXPECT_NE(help.out().find("--token TOKEN"), std::string::npos) << help.out();
  EXPECT_NE(help.out().find("workers-ai"), std::string::npos) << help.out();

  MockProcess ollama({"--port", "0", "--token", "s3cret"});
  EXPECT_EQ(ollama.exit_code(10s), 2) << ollama.err();
  EXPECT_NE(ollama.err().find("clef mock: error: --token: only the Workers AI and OpenAI profiles"),
            std::string::npos)
      << ollama.err();
  EXPECT_EQ(ollama.out(), "") << "no URL: it never served";
  MockProcess blank({"--port", "0", "--profile", "workers-ai", "--token", ""});
  EXPECT_EQ(blank.exit_code(10s), 2) << blank.err();
  EXPECT_NE(blank.err().find("--token: is empty"), std::string::npos) << blank.err();
}

#endif  // CLEF_MOCK_EXE

}  // namespace
