// Issue 7 through the command line: poisoned items, stalls, quota, mixed runs, two writers,
// write failures, terminal escapes, a private CA. Each asserts the exit code and the message.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "batch/batch_input.hpp"
#include "child_clef.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"
#include "silent_listener.hpp"
#include "wait_until.hpp"

namespace {

using clef::testing::batch_args;
using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::jsonl_tickets;
using clef::testing::lines_by_id;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::Scripted;
using clef::testing::ServerShape;
using clef::testing::SilentListener;
using clef::testing::spawn_clef;
using clef::testing::wait_for_exit;
using clef::testing::wait_until;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;
using namespace std::chrono_literals;

TEST(CliHostile, APoisonedAnswerIsThatItemsErrorAndResumeRedoesIt) {
  FakeServer server;
  std::atomic<bool> poison{true};
  server.set_script([&](const auto& request, int) -> std::optional<Scripted> {
    if (!poison) return std::nullopt;
    if (request.body.find("number 2\"") != std::string::npos)
      return Scripted{200, R"({"answers":{"urgent":{"type":"noul","noul":1e400}}})"};
    if (request.body.find("number 4\"") != std::string::npos)
      return Scripted{200, R"({"answers":{"urgent":)" + std::string(100'000, '[') + "}}"};
    if (request.body.find("number 6\"") != std::string::npos)  // invalid: not in [0, 1]
      return Scripted{200, R"({"answers":{"urgent":{"type":"noul","noul":3}}})"};
    return std::nullopt;
  });
  const std::string input = write_temp_file("poison.jsonl", jsonl_tickets(8));
  const std::string output = fresh_path("poison_out.jsonl");
  auto r = run_clef(batch_args(server.base_url(), input, output));
  ASSERT_EQ(r.code, 6) << r.err;  // the run went on past both
  auto lines = lines_by_id(output);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines["T2"]["error"]["kind"], "invalid_response");
  EXPECT_NE(lines["T2"]["error"]["message"].get<std::string>().find("outside the range"),
            std::string::npos);
  EXPECT_NE(lines["T4"]["error"]["message"].get<std::string>().find("nests deeper"),
            std::string::npos);
  EXPECT_EQ(lines["T6"]["answers"]["urgent"]["status"], "invalid");
  EXPECT_EQ(lines["T0"]["answers"]["urgent"]["status"], "ok");
  poison = false;
  const int before = server.request_count();
  auto resumed = run_clef(batch_args(server.base_url(), input, output, {"--resume"}));
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(server.request_count() - before, 3);  // T2, T4 and the invalid T6
  for (auto& [id, line] : lines_by_id(output))
    EXPECT_EQ(line["answers"]["urgent"]["status"], "ok") << id;
}

TEST(CliHostile, HostileInputFilesAndFlagsAreUsageErrors) {
  FakeServer server;
  const std::string input =
      write_temp_file("hostile_in.jsonl", R"({"id":"a","state":{"n":1e400}})"
                                          "\n" +
                                              std::string(100'000, '[') + "\n" + jsonl_tickets(1));
  const std::string output = fresh_path("hostile_in_out.jsonl");
  auto r = run_clef(batch_args(server.base_url(), input, output, {"--ordered"}));
  EXPECT_EQ(r.code, 6) << r.err;
  auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[0]["id"].is_null());
  EXPECT_EQ(lines[0]["line"], 1);
  EXPECT_EQ(lines[0]["error"]["where"], "line 1, byte 23");
  EXPECT_EQ(lines[1]["line"], 2);
  EXPECT_NE(lines[1]["error"]["message"].get<std::string>().find("nests deeper"),
            std::string::npos);
  EXPECT_EQ(lines[2]["id"], "T0");

  auto state = run_clef(
      {"ask", "--state-json", R"({"a":1e400})", "--yes-no", "u: U?", "--host", server.base_url()});
  EXPECT_EQ(state.code, 2);
  EXPECT_NE(state.err.find("outside the range of a double"), std::string::npos) << state.err;
  auto questions =
      run_clef({"ask", "x", "--questions",
                write_temp_file("q_big.json", R"({"u":{"type":"noul","instructions":1e400}})"),
                "--host", server.base_url()});
  EXPECT_EQ(questions.code, 2);
  EXPECT_NE(questions.err.find("q_big.json: byte 35"), std::string::npos) << questions.err;
  for (const char* timeout : {"0", "-1", "1e9"}) {
    auto t = run_clef({"ask", "x", "--yes-no", "u: U?", "--timeout", timeout});
    EXPECT_EQ(t.code, 2) << timeout;
  }
}

TEST(CliHostile, ALongRetryAfterPausesForTheCapAndSaysSo) {
  FakeServer server;
  server.set_script([](const auto&, int call) -> std::optional<Scripted> {
    if (call == 0)
      return Scripted{
          429, R"({"error":"slow down"})", "application/json", {{"Retry-After", "3600"}}};
    return std::nullopt;
  });
  const std::string output = fresh_path("pause_out.jsonl");
  const auto start = std::chrono::steady_clock::now();
  auto r = run_clef(batch_args(server.base_url(), write_temp_file("pause.jsonl", jsonl_tickets(3)),
                               output, {"-j", "1", "--max-retry-after", "1"}));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(took, 20s);    // not an hour
  EXPECT_GE(took, 900ms);  // but the capped pause was honoured
  EXPECT_NE(r.err.find("paused until"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("HTTP 429"), std::string::npos) << r.err;
  EXPECT_EQ(lines_of(read_file(output)).size(), 3u);
}

TEST(CliHostile, OnePauseIsOneLineHoweverManyItemsItRefused) {
  // Sixteen items in flight, each refused with Retry-After: 2: one pause, so one line on a
  // stderr that is not a terminal (each refusal moves the pause's end a little, which is no news).
  FakeServer server;
  server.set_script([](const auto&, int call) -> std::optional<Scripted> {
    if (call < 16)
      return Scripted{503,
                      R"({"error":"busy"})",
                      "application/json",
                      {{"Retry-After", "2"}},
                      std::chrono::milliseconds(call)};
    return std::nullopt;
  });
  const std::string output = fresh_path("one_pause_out.jsonl");
  auto r =
      run_clef(batch_args(server.base_url(), write_temp_file("one_pause.jsonl", jsonl_tickets(32)),
                          output, {"-j", "16"}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::size_t lines = 0;
  for (std::size_t at = r.err.find("paused until"); at != std::string::npos;
       at = r.err.find("paused until", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << r.err;
  EXPECT_EQ(lines_of(read_file(output)).size(), 32u);
}

TEST(CliHostile, WorkersDailyAllocationStopsTheBatchAndResumeFinishesIt) {
  FakeServer server(ServerShape::workers_ai);
  std::atomic<bool> exhausted{true};
  server.set_script([&](const auto&, int call) -> std::optional<Scripted> {
    if (exhausted && call >= 3) {
      return Scripted{
          429,
          R"({"result":null,"success":false,"errors":[{"code":4006,"message":"you have used up your daily free allocation of 10,000 neurons"}],"messages":[]})"};
    }
    return std::nullopt;
  });
  const std::string input = write_temp_file("quota.jsonl", jsonl_tickets(50));
  const std::string output = fresh_path("quota_out.jsonl");
  std::vector<std::string> args = {"batch",
                                   input,
                                   "-o",
                                   output,
                                   "--backend",
                                   "workers-ai",
                                   "--host",
                                   server.base_url() + "/client/v4",
                                   "--account-id",
                                   "acc9",
                                   "--api-token-file",
                                   write_temp_file("qtok", "test-token\n"),
                                   "--yes-no",
                                   "u: U?",
                                   "-j",
                                   "1",
                                   "--retries",
                                   "3"};
  auto r = run_clef(args);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("daily allocation is used up"), std::string::npos) << r.err;
  EXPECT_EQ(server.request_count(), 4);  // 3 answered, 1 quota, never retried, nothing after
  EXPECT_EQ(lines_of(read_file(output)).size(), 3u);
  exhausted = false;
  args.push_back("--resume");
  auto resumed = run_clef(args);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(lines_by_id(output).size(), 50u);
  EXPECT_EQ(lines_of(read_file(output)).size(), 50u);
}

TEST(CliHostile, ResumeRefusesAnotherRunNamingWhatDiffers) {
  FakeServer server;
  const std::string input = write_temp_file("mix.jsonl", jsonl_tickets(3));
  const std::string output = fresh_path("mix_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), input, output)).code, 0);
  const std::string before = read_file(output);
  auto other_questions = run_clef({"batch", input, "-o", output, "--host", server.base_url(),
                                   "--yes-no", "refund: Wants a refund?", "--resume"});
  EXPECT_EQ(other_questions.code, 2);
  EXPECT_NE(other_questions.err.find("questions_sha256: was"), std::string::npos)
      << other_questions.err;
  auto other_model =
      run_clef(batch_args(server.base_url(), input, output, {"--resume", "-m", "clef"}));
  EXPECT_EQ(other_model.code, 2);
  EXPECT_NE(other_model.err.find("model: was \"clef-flash\", now \"clef\""), std::string::npos)
      << other_model.err;
  auto other_input = run_clef(batch_args(
      server.base_url(), write_temp_file("mix2.jsonl", jsonl_tickets(4)), output, {"--resume"}));
  EXPECT_EQ(other_input.code, 2);
  EXPECT_NE(other_input.err.find("input: was"), std::string::npos) << other_input.err;
  EXPECT_EQ(read_file(output), before);  // untouched by the refusals
  auto forced =
      run_clef(batch_args(server.base_url(), write_temp_file("mix2.jsonl", jsonl_tickets(4)),
                          output, {"--resume", "--force-resume"}));
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(lines_of(read_file(output)).size(), 4u);
  // No record at all (a file from elsewhere) is refused too.
  const std::string foreign = fresh_path("foreign_out.jsonl");
  {
    std::ofstream(foreign) << R"({"id":"T0","answers":{"urgent":{"status":"ok"}}})"
                           << "\n";
  }
  auto r = run_clef(batch_args(server.base_url(), input, foreign, {"--resume"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no run record"), std::string::npos) << r.err;
}

TEST(CliHostile, ASecondWriterIsRefusedAtOnce) {
  FakeServer server;
  const std::string output = fresh_path("locked_out.jsonl");
  const int fd = ::open(output.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);  // as a running clef batch holds it
  // No clock: the lock is held throughout, so a blocking wait for it would never return (and
  // ctest's timeout would name this test); returning at all means it did not wait.
  auto r = run_clef(batch_args(server.base_url(), write_temp_file("lock.jsonl", jsonl_tickets(2)),
                               output, {"--resume"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("another clef batch is writing this file"), std::string::npos) << r.err;
  EXPECT_EQ(server.request_count(), 0);
  ::close(fd);
  EXPECT_EQ(run_clef(batch_args(server.base_url(), write_temp_file("lock.jsonl", jsonl_tickets(2)),
                                output, {"--resume"}))
                .code,
            0);
}

TEST(CliHostile, DuplicateIdsAreReportedAndDedupeCopiesTheFirstAnswer) {
  FakeServer server;
  std::string input;
  for (int i = 0; i < 20; ++i)
    input += Json({{"id", i % 10}, {"state", "same text"}}).dump() + "\n";
  const std::string output = fresh_path("dups_out.jsonl");
  auto r = run_clef(batch_args(server.base_url(), write_temp_file("dups.jsonl", input), output,
                               {"--dedupe", "--ordered"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: 10 input line(s) repeat an earlier id"), std::string::npos)
      << r.err;
  EXPECT_EQ(server.request_count(), 1);
  const auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 20u);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["id"], i % 10);
    EXPECT_EQ(lines[i]["duplicate_of"], 0);
    EXPECT_EQ(lines[i]["answers"], lines[0]["answers"]);
  }
}

// Input lines that repeat an id each get an answer; a resume cannot tell which line an answer
// under that id is for. It used to keep one of them and drop the rest, and send none again.
TEST(CliHostile, ResumeNeverDropsTheAnswersOfARepeatedId) {
  FakeServer server;
  std::string input;
  for (const char* text : {"refund me", "the app crashes", "hello"})
    input += Json({{"id", "x"}, {"state", text}}).dump() + "\n";
  const std::string in = write_temp_file("repeated_id.jsonl", input);
  const std::string output = fresh_path("repeated_id_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), in, output)).code, 0);
  const std::string written = read_file(output);
  ASSERT_EQ(lines_of(written).size(), 3u);
  auto r = run_clef(batch_args(server.base_url(), in, output, {"--resume"}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is on more than one result line (the second is line 2)"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_file(output), written);
  // Killed after one answer under x: the lines that repeat x are not sent, and say why.
  {
    std::ofstream(output, std::ios::binary | std::ios::trunc)
        << written.substr(0, written.find('\n') + 1);
  }
  const int before = server.request_count();
  r = run_clef(batch_args(server.base_url(), in, output, {"--resume"}));
  EXPECT_EQ(r.code, 6) << r.err;
  EXPECT_EQ(server.request_count(), before);
  const auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].dump(), lines_of(written)[0].dump());
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["id"], "x");
    EXPECT_NE(lines[i].dump().find("cannot tell which line"), std::string::npos) << lines[i].dump();
  }
}

// Lines kept by a --resume whose ids the input no longer has (an input cut down, an edited
// output) stay, and the run says so: the output has more lines than the input has items.
TEST(CliHostile, ResumeSaysWhenKeptLinesAnswerIdsTheInputNoLongerHas) {
  FakeServer server;
  const std::string in = write_temp_file("strangers.jsonl", jsonl_tickets(3));
  const std::string output = fresh_path("strangers_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), in, output)).code, 0);
  Json stranger = lines_of(read_file(output))[0];
  stranger["id"] = "zz";
  { std::ofstream(output, std::ios::app) << stranger.dump() << "\n"; }
  auto r = run_clef(batch_args(server.base_url(), in, output, {"--resume"}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: 1 line(s) kept from the last run answer ids the input no "
                       "longer has (one: \"zz\")"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(lines_of(read_file(output)).size(), 4u);
  // Every kept id in the input: nothing said.
  const std::string whole = fresh_path("strangers_none.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), in, whole)).code, 0);
  r = run_clef(batch_args(server.base_url(), in, whole, {"--resume"}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("no longer has"), std::string::npos) << r.err;
}

/// The wait status of `clef ARGS…` under a file-size limit of `bytes` (clef ignores SIGXFSZ, so
/// a write past it fails with EFBIG): stdin /dev/null, stdout and stderr to these files ("" is
/// /dev/null).
int status_under_file_size_limit(rlim_t bytes, const std::vector<std::string>& args,
                                 const std::string& stdout_path, const std::string& stderr_path) {
  // Everything the child needs is made before fork(): this process has threads (the server's).
  std::vector<char*> argv{const_cast<char*>(CLEF_EXE)};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const std::string out = stdout_path.empty() ? "/dev/null" : stdout_path;
  const std::string err = stderr_path.empty() ? "/dev/null" : stderr_path;
  const pid_t child = fork();
  if (child == 0) {
    rlimit limit{bytes, bytes};
    setrlimit(RLIMIT_FSIZE, &limit);
    dup2(::open("/dev/null", O_RDONLY), 0);
    dup2(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 1);
    dup2(::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 2);
    execv(CLEF_EXE, argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// A cache pack that cannot be written whole (a full disk, a file-size limit) does not take a
// pack's name: one cut at the limit did, and the next run threw it away, saying nothing.
TEST(CliHostile, ACachePackCutShortIsNotPutInPlace) {
  FakeServer server;
  const std::string cache = fresh_path("fsize_cache");
  const std::string input = write_temp_file("fsize_cache.jsonl", jsonl_tickets(60));
  const rlim_t limit = 4096;  // the first pack (one answer) fits; the rest's pack does not
  const int status =
      status_under_file_size_limit(limit,
                                   {"batch", input, "-o", "/dev/null", "--host", server.base_url(),
                                    "--yes-no", "u: U?", "--cache", cache},
                                   "", "");
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  std::size_t packs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache + "/packs")) {
    EXPECT_EQ(entry.path().extension(), ".pack") << "left behind: " << entry.path();
    EXPECT_LT(entry.file_size(), limit) << "a pack cut at the limit: " << entry.path();
    ++packs;
  }
  EXPECT_GE(packs, 1u) << "the pack that fits is written";
}

// A cache directory nothing can be made in is said, as any unwritable one: as root, /proc
// passed the access check and the run cached nothing, with no word.
TEST(CliHostile, ACacheDirectoryWhereNothingCanBeMadeIsSaid) {
  FakeServer server;
  auto r = run_clef({"ask", "--host", server.base_url(), "--cache", "/proc", "--state-json",
                     R"({"a":1})", "--yes-no", "u: U?"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("cannot write to the cache directory /proc"), std::string::npos) << r.err;
}

// A file's name is shown on one line: a newline in it started a line of its own on stderr, one
// that could pass for clef's ("clef: error: ..."). An image that cannot be opened says why.
TEST(CliHostile, AFileNameCannotForgeALineOfStderr) {
  const std::string forged = write_temp_file("a\nclef: error: forged.png", "x");
  auto r = run_clef({"ask", "--host", "http://127.0.0.1:1", "--yes-no", "u: U?", "--state-json",
                     "{}", "--image", forged});
  EXPECT_EQ(r.code, 2) << r.err;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);)
    EXPECT_NE(line.rfind("clef: error: forged", 0), 0u) << r.err;
  auto missing = run_clef({"ask", "--host", "http://127.0.0.1:1", "--yes-no", "u: U?",
                           "--state-json", "{}", "--image", fresh_path("no_such.png")});
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_NE(missing.err.find("cannot open image file: No such file or directory"),
            std::string::npos)
      << missing.err;
}

TEST(CliHostile, WriteFailuresHaveTheirOwnExitCode) {
  FakeServer server;
  auto full =
      run_clef(batch_args(server.base_url(), write_temp_file("full.jsonl", jsonl_tickets(3)),
                          "/dev/full", {"--overwrite"}));
  EXPECT_EQ(full.code, 7) << full.err;
  EXPECT_NE(full.err.find("cannot write to /dev/full"), std::string::npos) << full.err;
  EXPECT_EQ(full.err.find("--help"), std::string::npos);

  // A file-size limit: SIGXFSZ is ignored, so the write error path runs (exit 7, not a signal).
  FakeServer sized;  // its own: it counts this run's requests only
  const std::string output = fresh_path("fsize_out.jsonl");
  const std::string err_path = fresh_path("fsize_err.txt");
  const std::string input = write_temp_file("fsize.jsonl", jsonl_tickets(200));
  const int status = status_under_file_size_limit(
      4096, {"batch", input, "-o", output, "--host", sized.base_url(), "--yes-no", "u: U?"}, "",
      err_path);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 7);
  const std::string text = read_file(output);
  EXPECT_LE(text.size(), 4096u);
  EXPECT_EQ(text.back(), '\n');  // whole lines only
  // Every answer is counted: written, or not done (those after the failure are not tried).
  const std::string err = read_file(err_path);
  std::size_t written = 0;
  std::size_t not_done = 0;
  const auto summary = err.find("clef: batch: ");
  ASSERT_NE(summary, std::string::npos) << err;
  ASSERT_EQ(std::sscanf(err.c_str() + summary, "clef: batch: %zu written", &written), 1) << err;
  const auto said = err.find(" not done");
  ASSERT_NE(said, std::string::npos) << err;
  not_done = std::stoul(err.substr(err.rfind(", ", said) + 2));
  EXPECT_EQ(written, lines_of(text).size()) << err;
  std::size_t decisions = 0;  // the requests that asked for one (not a look at the model)
  for (const auto& request : sized.requests()) decisions += request.path == "/v1/systemone";
  EXPECT_GE(written + not_done, decisions) << err;
}

TEST(CliHostile, StdoutUnderAFileSizeLimitSaysHowManyWholeLinesItHolds) {
  // -o - into a file a size limit stops: what stderr says was written is exactly the whole lines
  // the file holds (stdout cannot be cut back: a torn last line may stay, and is not counted).
  FakeServer server;
  const std::string output = fresh_path("fsize_stdout.jsonl");
  const std::string err_path = fresh_path("fsize_stdout_err.txt");
  const std::string input = write_temp_file("fsize_stdout_in.jsonl", jsonl_tickets(300));
  const int status = status_under_file_size_limit(
      20480,
      {"batch", input, "-o", "-", "-j", "16", "--host", server.base_url(), "--yes-no", "u: U?"},
      output, err_path);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 7);
  const std::string text = read_file(output);
  const auto whole = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  const std::string err = read_file(err_path);
  const auto said = err.find(" were written before it");
  ASSERT_NE(said, std::string::npos) << err;
  const std::size_t written = std::stoul(err.substr(err.rfind("; ", said) + 2));
  EXPECT_GT(whole, 0u) << err;
  EXPECT_EQ(written, whole) << err;
}

TEST(CliHostile, ServerTextCannotDriveTheTerminal) {
  FakeServer server;
  server.set_script([](const auto&, int) -> std::optional<Scripted> {
    return Scripted{400, "{\"error\":\"\\u001b[2J\\u001b]0;pwned\\u0007 bad\"}"};
  });
  auto r = run_clef({"ask", "x", "--yes-no", "u: U?", "--host", server.base_url()});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.err.find('\x07'), std::string::npos);
  EXPECT_NE(r.err.find("?[2J"), std::string::npos) << r.err;
}

TEST(CliHostile, OneInterruptEndsModelsAndDoctorAgainstAServerThatNeverAnswers) {
  // Nothing to finish gracefully: the first SIGINT or SIGTERM cancels the request at once, as
  // it does for clef ask, rather than waiting out the timeout.
  SilentListener silent;
  for (const char* command : {"models", "doctor"}) {
    for (const int signal : {SIGINT, SIGTERM}) {
      const std::string err = fresh_path("interrupt_server_command_err.txt");
      const pid_t child = spawn_clef({command, "--host", silent.url(), "--timeout", "60"}, "", err);
      ASSERT_TRUE(silent.accept_one()) << command;
      ASSERT_TRUE(wait_until([&] { return silent.unread() > 0; }, "the request sent"));
      const auto signalled = std::chrono::steady_clock::now();
      ::kill(child, signal);
      EXPECT_EQ(wait_for_exit(child, std::chrono::seconds(20)), 130)
          << command << " " << signal << ": " << read_file(err);
      EXPECT_LT(std::chrono::steady_clock::now() - signalled, std::chrono::seconds(2)) << command;
    }
  }
}

TEST(CliHostile, AnOllamaApiErrorNamesTheCallAndDoctorSaysStartOnlyWhenNothingAnswers) {
  httplib::Server server;
  for (const char* path : {"/api/tags", "/api/version"}) {
    server.Get(path, [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_content("busy", "text/plain");
    });
  }
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  if (wait_until([&] { return server.is_running(); }, "the server to listen")) {
    const std::string host = "http://127.0.0.1:" + std::to_string(port);
    auto models = run_clef({"models", "--host", host});
    EXPECT_EQ(models.code, 4) << models.err;
    EXPECT_NE(models.err.find(host + "/api/tags"), std::string::npos) << models.err;
    auto doctor = run_clef({"doctor", "--host", host});
    EXPECT_EQ(doctor.code, 4) << doctor.out;
    EXPECT_NE(doctor.out.find(host + "/api/version"), std::string::npos) << doctor.out;
    EXPECT_EQ(doctor.out.find("ollama serve"), std::string::npos)
        << "a server that answered 503 is running: " << doctor.out;
  }
  server.stop();
  thread.join();
}

TEST(CliHostile, ServerTextCannotStartALineOfItsOwn) {
  // A line break, a C1 control (U+009B, CSI to some terminals) and a right-to-left override
  // (U+202E) in an error body, a version and a model's name: each shown inside its own line.
  FakeServer server;
  server.set_script([](const auto&, int) -> std::optional<Scripted> {
    return Scripted{400, "{\"error\":\"bad\\nclef: FAKE line \\u009b2J \\u202eevil\"}"};
  });
  auto r = run_clef({"ask", "x", "--yes-no", "u: U?", "--host", server.base_url()});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err.find("\nclef: FAKE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad clef: FAKE line ?2J ?evil"), std::string::npos) << r.err;
  // A byte that is no UTF-8 (a lone 0x9b, CSI to an 8-bit terminal) in a plain-text body.
  server.set_script([](const auto&, int) -> std::optional<Scripted> {
    return Scripted{500,
                    "broken \x9b"
                    "2J \xc2",
                    "text/plain"};
  });
  auto stray =
      run_clef({"ask", "x", "--yes-no", "u: U?", "--host", server.base_url(), "--retries", "0"});
  EXPECT_EQ(stray.err.find('\x9b'), std::string::npos) << stray.err;
  EXPECT_NE(stray.err.find("broken ?2J ?"), std::string::npos) << stray.err;
  // An option's label from a questions file, shown by ask: one line, no raw controls.
  server.set_script(nullptr);
  const std::string labels = write_temp_file(
      "evil_labels.json",
      R"({"team": {"type": "choice", "instructions": "Which?", "criteria": {"bil\nling": "P\u0085x", "o\u009bther\u2069": null}}})");
  auto asked = run_clef({"ask", "-q", labels, "--host", server.base_url(), "hello"});
  ASSERT_EQ(asked.code, 0) << asked.err;
  EXPECT_NE(asked.out.find("bil?ling"), std::string::npos) << asked.out;
  EXPECT_EQ(asked.out.find("bil\nling"), std::string::npos) << asked.out;
  EXPECT_EQ(asked.out.find("\xc2\x9b"), std::string::npos) << asked.out;
  EXPECT_EQ(asked.out.find("\xe2\x81\xa9"), std::string::npos) << asked.out;
  server.set_version("0.40.0\x1b[2J\nFAKE ok line");
  auto doctor = run_clef({"doctor", "--host", server.base_url()});
  EXPECT_EQ(doctor.out.find("\nFAKE"), std::string::npos) << doctor.out;
  EXPECT_EQ(doctor.out.find('\x1b'), std::string::npos) << doctor.out;
}

TEST(CliHostile, AnEchoedTokenReachesNeitherStderrNorTheOutputFile) {
  const std::string token = "sk-live-0123456789abcdefghijklmnopqrstuv";
  FakeServer server;
  server.set_script(
      [&](const clef::testing::RecordedRequest& request, int) -> std::optional<Scripted> {
        const std::string auth = request.header("Authorization");
        return Scripted{500,
                        R"({"error":{"message":")" + auth + R"(","code":")" + auth + R"("}})",
                        "application/json",
                        {{"X-Request-Id", auth}, {"cf-ai-req-id", auth}, {"cf-aig-log-id", auth}}};
      });
  const std::string output = fresh_path("echo_out.jsonl");
  auto r = run_clef({"batch", write_temp_file("echo.jsonl", jsonl_tickets(3)), "-o", output,
                     "--backend", "systemone", "--host", server.base_url(), "--api-token-file",
                     write_temp_file("echo_tok", token + "\n"), "--yes-no", "u: U?", "--retries",
                     "0", "-v"});
  EXPECT_EQ(r.code, 6) << r.err;
  // -v prints cf-ai-req-id and cf-aig-log-id from each response: scrubbed there too.
  EXPECT_NE(r.err.find("cf-ai-req-id Bearer <redacted>"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(token.substr(10)), std::string::npos) << r.err;
  const std::string written = read_file(output);
  EXPECT_EQ(written.find(token.substr(10)), std::string::npos) << written;
  EXPECT_NE(written.find("<redacted>"), std::string::npos);
}

/// A CA and a server certificate for 127.0.0.1 signed by it, made with the openssl tool.
struct TestPki {
  std::string dir = ::testing::TempDir() + "clef_pki";
  std::string ca() const { return dir + "/ca.pem"; }
  std::string cert() const { return dir + "/server.pem"; }
  std::string key() const { return dir + "/server.key"; }
  bool make() const {
    const std::string script =
        "set -e; rm -rf '" + dir + "'; mkdir -p '" + dir + "'; cd '" + dir +
        "'; openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
        "-subj /CN=clef-test-ca 2>/dev/null; openssl req -newkey rsa:2048 -nodes -keyout "
        "server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null; printf "
        "'subjectAltName=IP:127.0.0.1' > ext; openssl x509 -req -in server.csr -CA ca.pem -CAkey "
        "ca.key -CAcreateserial -out server.pem -days 2 -extfile ext 2>/dev/null";
    return std::system(("bash -c \"" + script + "\"").c_str()) == 0;
  }
};

TEST(CliHostile, APrivateCaIsRefusedWithoutTrustAndAcceptedWithIt) {
  TestPki pki;
  ASSERT_TRUE(pki.make());
  httplib::SSLServer server(pki.cert().c_str(), pki.key().c_str());
  ASSERT_TRUE(server.is_valid());
  server.Post("/v1/systemone", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"model":"clef-flash","answers":{"u":{"type":"noul","noul":0.9}}})",
                    "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  if (!wait_until([&] { return server.is_running(); }, "the TLS server to listen")) {
    server.stop();
    thread.join();
    return;
  }
  const std::string host = "https://127.0.0.1:" + std::to_string(port);

  auto refused =
      run_clef({"ask", "x", "--yes-no", "u: U?", "--host", host, "--retries", "0", "--ca-cert",
                "/etc/ssl/certs/ca-certificates.crt"});  // whatever the environment says
  EXPECT_EQ(refused.code, 5) << refused.err;
  EXPECT_NE(refused.err.find("TLS"), std::string::npos) << refused.err;
  auto accepted = run_clef({"ask", "x", "--yes-no", "u: U?", "--host", host, "--ca-cert", pki.ca(),
                            "--format", "values"});
  EXPECT_EQ(accepted.code, 0) << accepted.err;
  EXPECT_EQ(accepted.out, "yes\n");
  // The environment: CURL_CA_BUNDLE wins over SSL_CERT_FILE, as in curl.
  const char* saved_curl = std::getenv("CURL_CA_BUNDLE");
  const char* saved_ssl = std::getenv("SSL_CERT_FILE");
  const std::string curl_value = saved_curl ? saved_curl : "";
  const std::string ssl_value = saved_ssl ? saved_ssl : "";
  ::unsetenv("CURL_CA_BUNDLE");
  ::setenv("SSL_CERT_FILE", pki.ca().c_str(), 1);
  auto from_ssl = run_clef({"ask", "x", "--yes-no", "u: U?", "--host", host, "--format", "values"});
  ::setenv("CURL_CA_BUNDLE", pki.ca().c_str(), 1);
  ::unsetenv("SSL_CERT_FILE");
  auto from_curl =
      run_clef({"ask", "x", "--yes-no", "u: U?", "--host", host, "--format", "values"});
  saved_curl ? ::setenv("CURL_CA_BUNDLE", curl_value.c_str(), 1) : ::unsetenv("CURL_CA_BUNDLE");
  saved_ssl ? ::setenv("SSL_CERT_FILE", ssl_value.c_str(), 1) : ::unsetenv("SSL_CERT_FILE");
  EXPECT_EQ(from_ssl.code, 0) << from_ssl.err;
  EXPECT_EQ(from_curl.code, 0) << from_curl.err;
  auto missing =
      run_clef({"ask", "x", "--yes-no", "u: U?", "--host", host, "--ca-cert", "/nonexistent.pem"});
  EXPECT_EQ(missing.code, 2);
  server.stop();
  thread.join();
}

}  // namespace

namespace {

TEST(CliHostile, ALineWithoutEndIsAnErrorLineNotAMemoryHog) {
  FakeServer server;
  const std::string huge(clef::cli::max_input_line + 1, 'a');
  const std::string jsonl =
      write_temp_file("huge.jsonl", "{\"id\":\"big\",\"state\":\"" + huge +
                                        "\"}\n{\"id\":\"ok\",\"state\":\"x\"}\n");
  const std::string csv = write_temp_file("huge.csv", "id,state\nA,\"" + huge + "\n\"\nok,fine\n");
  for (const std::string& input : {jsonl, csv}) {
    const std::string out = fresh_path("huge_out.jsonl");
    auto r = run_clef(batch_args(server.base_url(), input, out, {"--ordered"}));
    EXPECT_EQ(r.code, 6) << r.err;
    const auto lines = lines_of(read_file(out));
    ASSERT_EQ(lines.size(), 2u) << input;
    EXPECT_EQ(lines[0]["error"]["message"], "the line is longer than 32 MiB");
    EXPECT_EQ(lines[1]["id"], "ok");  // the next record starts where it should
    EXPECT_TRUE(lines[1].contains("answers"));
  }
  EXPECT_EQ(server.request_count(), 2);
}

}  // namespace
