// Issue 15 through the command line, the client's side: passwords in URLs, proxies and local
// servers, output that cannot be written, duplicates on stdout, Excel's CSV, formula cells.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "child_clef.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::batch_args;
using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::jsonl_tickets;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::refusing_port;
using clef::testing::run_clef;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;

/// Sets environment variables for one test and restores them after it.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(std::vector<std::pair<std::string, std::string>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      m_saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : m_saved) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> m_saved;
};

/// "http://alice:S3cretPW@127.0.0.1:PORT".
std::string with_password(const FakeServer& server) {
  return "http://alice:S3cretPW@127.0.0.1:" + std::to_string(server.port());
}

const char* card_choice =
    "team: Which team? | billing=Payments and refunds | technical=Bugs | other=None";

TEST(CliTrust, APasswordInTheHostIsBasicAuthAndIsNeverShownOrWritten) {
  // Issue 15, item 16: it was mangled into http://[alice:S3cretPW@127.0.0.1:PORT]:80, and the
  // password appeared in errors, -v, --dry-run, --print-curl, batch lines and the run record.
  FakeServer server;
  auto asked = run_clef({"ask", "charged twice", "--choice", card_choice, "--host",
                         with_password(server), "-v", "--json"});
  ASSERT_EQ(asked.code, 0) << asked.err;
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].header("Authorization"), "Basic YWxpY2U6UzNjcmV0UFc=");
  EXPECT_NE(asked.err.find("Authorization: Basic <redacted>"), std::string::npos) << asked.err;

  auto dry =
      run_clef({"ask", "x", "--choice", card_choice, "--host", with_password(server), "--dry-run"});
  EXPECT_EQ(dry.code, 0) << dry.err;
  auto curl = run_clef(
      {"ask", "x", "--choice", card_choice, "--host", with_password(server), "--print-curl"});
  EXPECT_EQ(curl.code, 0) << curl.err;
  EXPECT_NE(curl.out.find("--user 'alice'"), std::string::npos) << curl.out;  // curl asks

  const std::string output = fresh_path("password_batch.jsonl");
  auto batch = run_clef(batch_args(with_password(server),
                                   write_temp_file("password_batch_in.jsonl", jsonl_tickets(2)),
                                   output, {"-v"}));
  EXPECT_EQ(batch.code, 0) << batch.err;

  auto down = run_clef({"ask", "x", "--choice", card_choice, "--host",
                        "http://alice:S3cretPW@127.0.0.1:" + std::to_string(refusing_port()),
                        "--retries", "0"});
  EXPECT_EQ(down.code, 5) << down.err;
  EXPECT_NE(down.err.find("http://127.0.0.1:"), std::string::npos) << down.err;

  ScopedEnvironment env({{"OLLAMA_HOST", with_password(server)}});
  auto from_env = run_clef({"ask", "x", "--choice", card_choice, "--json"});
  EXPECT_EQ(from_env.code, 0) << from_env.err;

  for (const std::string& text :
       {asked.out, asked.err, dry.out, dry.err, curl.out, curl.err, batch.out, batch.err,
        read_file(output), read_file(output + ".clef-run.json"), down.out, down.err, from_env.out,
        from_env.err}) {
    EXPECT_EQ(text.find("S3cretPW"), std::string::npos) << text;
  }
}

TEST(CliTrust, ALocalServerIsNeverReachedThroughTheEnvironmentsProxy) {
  // Issue 15, item 25: with http_proxy set, requests for 127.0.0.1 went to the proxy and failed
  // with "is Ollama running…?" while Ollama was running.
  FakeServer server;
  const std::string dead_proxy = "http://127.0.0.1:" + std::to_string(refusing_port());
  ScopedEnvironment env({{"http_proxy", dead_proxy}, {"ALL_PROXY", dead_proxy}});
  auto local = run_clef({"ask", "x", "--yes-no", "u: Urgent?", "--host", server.base_url()});
  EXPECT_EQ(local.code, 0) << local.err;
  EXPECT_EQ(server.request_count(), 1);

  // Asked for explicitly, the proxy is used for loopback too, and the error names it.
  auto proxied = run_clef({"ask", "x", "--yes-no", "u: Urgent?", "--host", server.base_url(),
                           "--proxy", dead_proxy, "--retries", "0", "-v"});
  EXPECT_EQ(proxied.code, 5) << proxied.err;
  EXPECT_NE(proxied.err.find("through the proxy " + dead_proxy + " (from the request)"),
            std::string::npos)
      << proxied.err;
  EXPECT_NE(proxied.err.find("is the proxy up"), std::string::npos) << proxied.err;
  EXPECT_EQ(proxied.err.find("ollama serve"), std::string::npos) << proxied.err;
  EXPECT_EQ(server.request_count(), 1);
}

/// Runs the clef executable with stdout on `stdout_path`; its exit code and stderr.
std::pair<int, std::string> run_clef_process(const std::vector<std::string>& args,
                                             const std::string& stdout_path) {
  const std::string err_path = fresh_path("process_stderr.txt");
  const int code =
      clef::testing::wait_for_exit(clef::testing::spawn_clef(args, stdout_path, err_path));
  return {code, read_file(err_path)};
}

TEST(CliTrust, AnAnswerThatCannotBeWrittenIsExitSeven) {
  // Issue 15, item 23: `clef ask … > /dev/full` exited 0 with nothing on stderr.
  FakeServer server;
  const std::vector<std::string> ask = {"ask",        "x",      "--yes-no",
                                        "u: Urgent?", "--host", server.base_url()};
  for (std::vector<std::string> extra : std::vector<std::vector<std::string>>{
           {}, {"--json"}, {"--format", "values"}, {"--dry-run"}}) {
    std::vector<std::string> args = ask;
    args.insert(args.end(), extra.begin(), extra.end());
    auto [code, err] = run_clef_process(args, "/dev/full");
    EXPECT_EQ(code, 7) << (extra.empty() ? "" : extra[0]) << ": " << err;
    EXPECT_NE(err.find("cannot write the output to stdout: No space left on device"),
              std::string::npos)
        << err;
  }
  auto [code, err] = run_clef_process(ask, "/dev/null");  // the control: a sink that takes it
  EXPECT_EQ(code, 0) << err;
}

TEST(CliTrust, DedupeToStdoutCountsADuplicateAsItsFirstWasCounted) {
  // Issue 15, item 24: to stdout each duplicate counted as a failure ("2 ok, 1 failed", exit 6)
  // where -o FILE gave "3 ok, 0 failed", exit 0.
  FakeServer server;
  const std::string input = write_temp_file("dedupe_stdout.jsonl", R"({"id":"a","state":"same"})"
                                                                   "\n"
                                                                   R"({"id":"b","state":"other"})"
                                                                   "\n"
                                                                   R"({"id":"c","state":"same"})"
                                                                   "\n");
  auto to_stdout = run_clef(batch_args(server.base_url(), input, "-", {"--dedupe", "--ordered"}));
  EXPECT_EQ(to_stdout.code, 0) << to_stdout.err;
  EXPECT_NE(to_stdout.err.find("3 written, 3 ok, 0 failed"), std::string::npos) << to_stdout.err;
  const auto lines = lines_of(to_stdout.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2]["duplicate_of"], "a");
  auto to_file = run_clef(batch_args(server.base_url(), input, fresh_path("dedupe_file.jsonl"),
                                     {"--dedupe", "--ordered"}));
  EXPECT_EQ(to_file.code, 0) << to_file.err;
  EXPECT_NE(to_file.err.find("3 written, 3 ok, 0 failed"), std::string::npos) << to_file.err;
}

TEST(CliTrust, ExcelsCsvWithAByteOrderMarkIsRead) {
  // Issue 15, item 20: "CSV UTF-8" from Excel failed with "the header has no "id" column".
  FakeServer server;
  const std::string bom = "\xEF\xBB\xBF";
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"bom.csv", bom + "id,state\nA1,charged twice\nA2,cannot log in\n"},
           {"bom.tsv", bom + "id\tstate\nA1\tcharged twice\nA2\tcannot log in\n"},
           {"bom.jsonl",
            bom + R"({"id":"A1","state":"x"})" + "\n" + R"({"id":"A2","state":"y"})" + "\n"}}) {
    const std::string output = fresh_path(name + ".out.jsonl");
    auto r =
        run_clef(batch_args(server.base_url(), write_temp_file(name, text), output, {"--ordered"}));
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    const auto lines = lines_of(read_file(output));
    ASSERT_EQ(lines.size(), 2u) << name;
    EXPECT_EQ(lines[0]["id"], "A1") << name;
  }
  // Bytes that only start like a mark are data, not dropped: U+FEFE is EF BB BE.
  const std::string output = fresh_path("almost_bom.out.jsonl");
  auto r = run_clef(batch_args(server.base_url(),
                               write_temp_file("almost_bom.txt", "\xEF\xBB\xBE abc\nplain\n"),
                               output, {"--ordered"}));
  EXPECT_EQ(lines_of(read_file(output)).size(), 2u) << r.err;
  bool kept = false;
  for (const auto& request : server.requests())
    kept |= request.body.find("\"\xEF\xBB\xBE abc\"") != std::string::npos;
  EXPECT_TRUE(kept);
}

TEST(CliTrust, NoTableCellCanStartAFormula) {
  // Issue 15, item 19 (the CSV part): a JSONL id "=1+2" landed raw in a CSV cell.
  FakeServer server;
  const std::string input = write_temp_file("formula_ids.jsonl",
                                            "{\"id\":\"=1+2\",\"state\":\"x\"}\n"
                                            "{\"id\":\"@SUM(A1)\",\"state\":\"y\"}\n"
                                            "{\"id\":-5,\"state\":\"z\"}\n");
  const std::string output = fresh_path("formula_ids.csv");
  auto r = run_clef(
      batch_args(server.base_url(), input, output, {"--ordered", "--output-format", "csv"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string table = read_file(output);
  EXPECT_NE(table.find("\n'=1+2,"), std::string::npos) << table;
  EXPECT_NE(table.find("\n'@SUM(A1),"), std::string::npos) << table;
  EXPECT_NE(table.find("\n-5,"), std::string::npos) << table;  // a number stays a number
  EXPECT_EQ(table.find("\n=1+2"), std::string::npos) << table;
}

}  // namespace
