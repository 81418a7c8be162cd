// One request pipeline (issue 30): `clef batch` with -v, --cache, --record or --replay runs its
// stages on the event loop, so 64 requests in flight cost no more threads than a plain run —
// counted in /proc/PID/task of the running process — and every id comes back once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "child_clef.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"
#include "silent_listener.hpp"
#include "thread_count.hpp"
#include "wait_until.hpp"

namespace {

using clef::testing::batch_args;
using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::jsonl_tickets;
using clef::testing::lines_by_id;
using clef::testing::spawn_clef;
using clef::testing::threads_of;
using clef::testing::wait_for_exit;
using clef::testing::write_temp_file;
using namespace std::chrono_literals;

#if defined(__SANITIZE_THREAD__)
#define CLEF_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CLEF_TEST_UNDER_TSAN 1
#endif
#endif
#ifdef CLEF_TEST_UNDER_TSAN
/// ThreadSanitizer's runtime runs a background thread of its own in each process it builds.
constexpr int runtime_threads = 1;
#else
constexpr int runtime_threads = 0;
#endif

struct BatchRun {
  int code = -1;
  int most_threads = 0;
};

/// `clef batch` over 256 tickets at -j 64, its threads counted every few milliseconds until it
/// exits.
BatchRun batch_counting_threads(const std::vector<std::string>& args) {
  BatchRun run;
  const pid_t child = spawn_clef(args);
  EXPECT_GT(child, 0);
  if (child <= 0) return run;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    run.most_threads = std::max(run.most_threads, threads_of(child));
    int status = 0;
    const pid_t ended = ::waitpid(child, &status, WNOHANG);
    if (ended == child) {
      run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return run;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      run.code = wait_for_exit(child);
      ADD_FAILURE() << "clef batch still running after 60 s";
      return run;
    }
    std::this_thread::sleep_for(2ms);  // a sampling interval, not a wait for a condition
  }
}

void expect_every_id_once(const std::string& output, int count) {
  const auto lines = lines_by_id(output);
  EXPECT_EQ(lines.size(), static_cast<std::size_t>(count));
  for (const auto& [id, line] : lines) EXPECT_FALSE(line.contains("error")) << id << " " << line;
}

class CliPipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    server.set_latency(100ms);
    // ctest runs each test as a process of its own, side by side: files named per test.
    name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    input = write_temp_file("pipeline_" + name + "_in.jsonl", jsonl_tickets(count));
    // The plain run: the yardstick for the others.
    const std::string output = fresh_path("pipeline_" + name + "_plain.jsonl");
    const BatchRun plain =
        batch_counting_threads(batch_args(server.base_url(), input, output, {"-j", "64"}));
    ASSERT_EQ(plain.code, 0);
    expect_every_id_once(output, count);
    plain_threads = plain.most_threads;
    // From a file to a file, the lines are read, the loop turned and the results written on
    // one thread. A thread per request in flight would be some 64 more.
    ASSERT_LE(plain_threads, 1 + runtime_threads)
        << "a plain batch from a file to a file runs on one thread";
  }

  void expect_like_the_plain_run(const std::string& run_name, std::vector<std::string> extra,
                                 int expected_code = 0) {
    const std::string output = fresh_path("pipeline_" + name + "_" + run_name + ".jsonl");
    extra.insert(extra.end(), {"-j", "64"});
    const BatchRun run =
        batch_counting_threads(batch_args(server.base_url(), input, output, extra));
    EXPECT_EQ(run.code, expected_code) << run_name;
    expect_every_id_once(output, count);
    EXPECT_LE(run.most_threads, plain_threads)
        << run_name << ": " << run.most_threads << " threads against " << plain_threads
        << " for the plain run";
  }

  static constexpr int count = 256;
  FakeServer server;
  std::string name;
  std::string input;
  int plain_threads = 0;
};

TEST_F(CliPipeline, VerboseRunsOnTheLoop) {
  expect_like_the_plain_run("verbose", {"-v"});
}

TEST_F(CliPipeline, CacheRunsOnTheLoopMissingThenHitting) {
  const std::string cache = fresh_path("pipeline_" + name + "_cache_dir");
  expect_like_the_plain_run("cache_miss", {"--cache", cache});
  const int sent = server.request_count();
  expect_like_the_plain_run("cache_hit", {"--cache", cache});
  EXPECT_EQ(server.request_count(), sent) << "the second run is answered from the cache";
}

TEST_F(CliPipeline, RecordAndReplayRunOnTheLoop) {
  const std::string cassette = fresh_path("pipeline_" + name + ".cassette.jsonl");
  expect_like_the_plain_run("record", {"--record", cassette});
  const int sent = server.request_count();
  expect_like_the_plain_run("replay", {"--replay", cassette});
  EXPECT_EQ(server.request_count(), sent) << "a replay sends nothing";
}

TEST(CliPipelineSignals, AFirstSignalEndsTheCachesModelLookup) {
  // --cache asks the server for the model's digest before any decision; a server that never
  // answers must not hold a Ctrl-C for the whole --timeout (nothing has started yet that a second
  // signal would be needed to abort).
  clef::testing::SilentListener silent;
  const std::string input = write_temp_file("pipeline_signal_in.jsonl", jsonl_tickets(10));
  const std::string output = fresh_path("pipeline_signal_out.jsonl");
  const std::string cache = fresh_path("pipeline_signal_cache");
  const pid_t child = spawn_clef(batch_args(silent.url(), input, output, {"--cache", cache}));
  ASSERT_GT(child, 0);
  ASSERT_TRUE(silent.accept_one()) << "the lookup never came";
  const auto signalled = std::chrono::steady_clock::now();
  ::kill(child, SIGINT);
  const int code = wait_for_exit(child, 30s);
  const auto took = std::chrono::steady_clock::now() - signalled;
  EXPECT_EQ(code, 130);
  EXPECT_LT(took, 5s) << "the lookup waited on after SIGINT";
}

TEST(CliPipelineSignals, AStderrNobodyReadsDoesNotHoldASignalledRun) {
  // -v into a pipe whose reader stopped reading (a paused pager): the pipe fills, the loop's
  // printing blocks, and SIGINT must still end the run.
  FakeServer server;
  server.set_latency(20ms);
  const std::string fifo = fresh_path("pipeline_stalled_stderr.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // never reads
  ASSERT_GE(reader, 0);
  const std::string input = write_temp_file("pipeline_stalled_in.jsonl", jsonl_tickets(2000));
  const std::string output = fresh_path("pipeline_stalled_out.jsonl");
  const pid_t child =
      spawn_clef(batch_args(server.base_url(), input, output, {"-j", "64", "-v"}), "", fifo);
  ASSERT_GT(child, 0);
  // Full as the kernel counts it: no page of the pipe free, so clef's next write waits (how many
  // bytes that is depends on the sizes of the writes: -v writes a loop turn's lines at once).
  const int probe = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(probe, 0);
  ASSERT_TRUE(clef::testing::wait_until(
      [&] {
        int unread = 0;
        ::ioctl(reader, FIONREAD, &unread);
        pollfd room{probe, POLLOUT, 0};
        return unread > 0 && ::poll(&room, 1, 0) == 0;
      },
      "the pipe full of -v lines"));
  const auto signalled = std::chrono::steady_clock::now();
  ::kill(child, SIGINT);
  const int code = wait_for_exit(child, 30s);
  const auto took = std::chrono::steady_clock::now() - signalled;
  ::close(probe);
  ::close(reader);
  EXPECT_EQ(code, 130);
  EXPECT_LT(took, 3s) << "the run waited for a reader that never read";
  // What was decided before the signal is in OUTPUT, each id once.
  const auto lines = lines_by_id(output);
  EXPECT_GT(lines.size(), 0u);
}

/// Everything written to `fd` (non-blocking) until its writers are gone — end of file for a
/// pipe, EIO for a terminal's master — within a minute.
std::string read_until_the_writers_close(int fd) {
  std::string text;
  char buffer[65536];
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd ready{fd, POLLIN, 0};
    ::poll(&ready, 1, 100);
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got > 0)
      text.append(buffer, static_cast<std::size_t>(got));
    else if (got == 0 || (errno != EAGAIN && errno != EINTR))
      break;
  }
  return text;
}

/// A FIFO whose reader is open but away: a child's stdout or stderr that fills and stays full
/// until the test reads it all.
class AwayReader {
 public:
  explicit AwayReader(const std::string& name) : path(fresh_path(name)) {
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    m_reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    EXPECT_GE(m_reader, 0);
  }
  ~AwayReader() {
    if (m_reader >= 0) ::close(m_reader);
  }
  AwayReader(const AwayReader&) = delete;
  AwayReader& operator=(const AwayReader&) = delete;

  /// Waits until the pipe is full as the kernel counts it (the writer's next write waits), then
  /// stays away `for_how_long`: the scenario itself, not a wait for a condition.
  bool fill_then_stay_away(std::chrono::milliseconds for_how_long) {
    const int probe = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (probe < 0) return false;
    const bool full = clef::testing::wait_until(
        [&] {
          pollfd room{probe, POLLOUT, 0};
          return ::poll(&room, 1, 0) == 0;
        },
        "the pipe full");
    ::close(probe);
    std::this_thread::sleep_for(for_how_long);
    return full;
  }

  /// Everything written, once the writer has closed its end (within a minute).
  std::string read_to_the_end() { return read_until_the_writers_close(m_reader); }

  const std::string path;

 private:
  int m_reader = -1;
};

TEST(CliPipelineStreams, AStdoutNobodyReadsForLongerThanTheTimeoutCostsNoAnswer) {
  // Results to a pipe whose reader stays away for longer than --timeout: the writes wait, and
  // the requests in flight meanwhile must still be read in time (the loop runs on a thread of
  // its own when the output may wait): none times out, none is sent twice, every id comes once.
  FakeServer server;
  server.set_latency(20ms);
  constexpr int count = 400;
  AwayReader stdout_reader("pipeline_stalled_stdout.fifo");
  const std::string input =
      write_temp_file("pipeline_stalled_stdout_in.jsonl", jsonl_tickets(count));
  const pid_t child =
      spawn_clef(batch_args(server.base_url(), input, "-", {"-j", "16", "--timeout", "2"}),
                 stdout_reader.path);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(stdout_reader.fill_then_stay_away(3000ms));  // 1.5 timeouts
  const std::string output = stdout_reader.read_to_the_end();
  EXPECT_EQ(wait_for_exit(child, 30s), 0);
  expect_every_id_once(write_temp_file("pipeline_stalled_stdout_out.jsonl", output), count);
  EXPECT_EQ(server.request_count(), count)
      << "an answer waited for past its timeout was sent again";
}

TEST(CliPipelineStreams, AStderrNobodyReadsForLongerThanTheTimeoutCostsNoAnswer) {
  // -v into a pipe whose reader stays away for longer than --timeout (a paused pager): the
  // lines wait in memory, the loop goes on, and no answer is lost to a timeout that was the
  // reader's (nor sent again for one).
  FakeServer server;
  server.set_latency(20ms);
  constexpr int count = 400;
  AwayReader stderr_reader("pipeline_stalled_verbose.fifo");
  const std::string input =
      write_temp_file("pipeline_stalled_verbose_in.jsonl", jsonl_tickets(count));
  const std::string output = fresh_path("pipeline_stalled_verbose_out.jsonl");
  const pid_t child =
      spawn_clef(batch_args(server.base_url(), input, output, {"-j", "16", "-v", "--timeout", "2"}),
                 "", stderr_reader.path);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(stderr_reader.fill_then_stay_away(3000ms));  // 1.5 timeouts
  const std::string log = stderr_reader.read_to_the_end();
  EXPECT_EQ(wait_for_exit(child, 30s), 0) << log.substr(log.size() > 2000 ? log.size() - 2000 : 0);
  expect_every_id_once(output, count);
  EXPECT_EQ(server.request_count(), count);
  EXPECT_EQ(log.find("timed out"), std::string::npos) << "a -v line tells of a timeout";
}

TEST(CliPipelineStreams, ATerminalNobodyReadsForLongerThanTheTimeoutCostsNoAnswer) {
  // stderr a terminal that stops being read (Ctrl-S, a pty nobody reads): a terminal says it has
  // room, then waits in the write anyway. Neither -v's lines nor the progress line's redraws may
  // wait there while the transfers in flight run out their --timeout.
  FakeServer server;
  server.set_latency(20ms);
  constexpr int count = 1000;
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::fcntl(master, F_SETFL, O_NONBLOCK), 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const std::string terminal = ::ptsname(master);
  const std::string input = write_temp_file("pipeline_stalled_tty_in.jsonl", jsonl_tickets(count));
  const std::string output = fresh_path("pipeline_stalled_tty_out.jsonl");
  const pid_t child =
      spawn_clef(batch_args(server.base_url(), input, output, {"-j", "16", "-v", "--timeout", "2"}),
                 "", terminal);
  ASSERT_GT(child, 0);
  // The scenario itself, not a wait for a condition: the terminal unread for 3 s (1.5 timeouts;
  // --timeout 2, not 1: a loaded machine's own stall of 1 s timed answers out), in which the
  // run's 200 KB of -v fill it many times over.
  std::this_thread::sleep_for(3s);
  const std::string log = read_until_the_writers_close(master);
  ::close(master);
  EXPECT_EQ(wait_for_exit(child, 30s), 0) << log.substr(log.size() > 2000 ? log.size() - 2000 : 0);
  expect_every_id_once(output, count);
  EXPECT_EQ(server.request_count(), count) << "an answer was waited for past its timeout";
  EXPECT_EQ(log.find("timed out"), std::string::npos) << "a -v line tells of a timeout";
}

TEST(CliPipelineLimits, AnOpenFileLimitTooLowForJIsSaidAndHonoured) {
  // -j 1000 under a hard limit of 300 open files: the connections past the limit used to fail at
  // once as "cannot connect", as if the server were down (most of the items, exit 6). clef says
  // so and keeps in flight what fits.
  FakeServer server;
  server.set_latency(50ms);
  const std::string input = write_temp_file("pipeline_nofile_in.jsonl", jsonl_tickets(600));
  const std::string output = fresh_path("pipeline_nofile_out.jsonl");
  const std::string err = fresh_path("pipeline_nofile_err.txt");
  std::string command = "ulimit -Sn 300 && ulimit -Hn 300 && exec '" + std::string(CLEF_EXE) + "'";
  for (const std::string& arg : batch_args(server.base_url(), input, output, {"-j", "1000"}))
    command += " '" + arg + "'";
  command += " 2> '" + err + "' > /dev/null";
  const int status = std::system(("bash -c \"" + command + "\"").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << clef::testing::read_file(err);
  expect_every_id_once(output, 600);
  EXPECT_NE(clef::testing::read_file(err).find("this process may open 300 (ulimit -Hn): running "
                                               "with -j 44"),
            std::string::npos)
      << clef::testing::read_file(err);
}

}  // namespace
