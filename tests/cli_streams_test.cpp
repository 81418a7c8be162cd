// Inputs and outputs that are not plain files: directories, FIFOs, pipes, devices, links. Each
// is read once (never consumed by a count or a hash before the run reads it), refused with the
// system's reason, written in place, or ended by SIGINT — never an abort, a hang or a loss.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batch/batch_input.hpp"
#include "child_clef.hpp"
#include "clef/batch.hpp"
#include "clef/cassette.hpp"
#include "clef/json.hpp"
#include "cli_runner.hpp"
#include "common/input_file.hpp"
#include "common/interruptible_stderr.hpp"
#include "fake_server.hpp"
#include "held_answers.hpp"
#include "instrumented.hpp"
#include "wait_until.hpp"

namespace {

using clef::testing::batch_args;
using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::HeldAnswers;
using clef::testing::jsonl_tickets;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::run_clef_child;
using clef::testing::spawn_clef;
using clef::testing::wait_for_child;
using clef::testing::wait_until;
using clef::testing::write_temp_file;
using namespace std::chrono_literals;

std::string fresh_directory(const std::string& name) {
  const std::string path = fresh_path(name);
  std::filesystem::remove_all(path);
  std::filesystem::create_directory(path);
  return path;
}

std::string fresh_fifo(const std::string& name) {
  const std::string path = fresh_path(name);
  std::remove(path.c_str());
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

/// A stop flag that outlives every stream of a test.
const std::atomic<bool>& stop_flag() {
  static const std::atomic<bool> stop{false};
  return stop;
}

/// What is in the pipe now, without waiting.
std::string drained(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  return text;
}

TEST(CliStreams, KeptVerboseLinesAreWrittenTogetherAndNeverOvertaken) {
  // -v's lines from the loop are kept and written once per loop turn: nothing written to
  // stderr after them may come out before them, and none is lost at the end.
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_NONBLOCK | O_CLOEXEC), 0);
  std::shared_ptr<clef::cli::KeptLines> kept;
  {
    clef::cli::InterruptibleStderr stderr_buffer(ends[1], &stop_flag());
    std::ostream err(&stderr_buffer);
    kept = stderr_buffer.kept_lines();
    kept->keep("> POST 1\n");
    kept->keep("> POST 2\n");
    EXPECT_EQ(drained(ends[0]), "") << "kept lines were written before their turn ended";
    kept->write_kept();
    EXPECT_EQ(drained(ends[0]), "> POST 1\n> POST 2\n");
    kept->keep("< HTTP 500\n");
    err << "clef: error: " << 500 << '\n';
    EXPECT_EQ(drained(ends[0]), "< HTTP 500\nclef: error: 500\n");
    kept->keep("< HTTP 200\n");
  }
  EXPECT_EQ(drained(ends[0]), "< HTTP 200\n") << "kept lines were lost at the end";
  // The loop's thread may write (or keep) after the stream is gone: nothing, and no crash.
  kept->keep("< late\n");
  kept->write_kept();
  EXPECT_EQ(drained(ends[0]), "");
  ::close(ends[0]);
  ::close(ends[1]);
}

TEST(CliStreams, KeptVerboseLinesWaitForAFullPipeInMemoryWithinABound) {
  // A stderr nobody reads: write_kept() (the loop's) writes what fits and returns, never
  // waiting; the rest comes out later, in order. Past KeptLines::kMostKept waiting, lines are
  // left out and how many is said where they would have been.
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);  // the writer's end blocks, as stderr does
  ASSERT_EQ(::fcntl(ends[0], F_SETFL, O_NONBLOCK), 0);
  ASSERT_GT(::fcntl(ends[1], F_SETPIPE_SZ, 4096), 0);
  const std::size_t pipe_size = static_cast<std::size_t>(::fcntl(ends[1], F_GETPIPE_SZ));
  {
    clef::cli::InterruptibleStderr stderr_buffer(ends[1], &stop_flag());
    const auto kept = stderr_buffer.kept_lines();
    std::string expected;
    for (int i = 0; i < 400; ++i) expected += "> POST " + std::to_string(i) + "\n";
    kept->keep(expected);
    kept->write_kept();  // returns: a blocking write of all of it would hang here
    std::string out = drained(ends[0]);
    EXPECT_LE(out.size(), pipe_size);
    EXPECT_GT(out.size(), 0u);
    for (int turns = 0; out.size() < expected.size() && turns < 1000; ++turns) {
      kept->write_kept();
      out += drained(ends[0]);
    }
    EXPECT_EQ(out, expected);

    const std::string big(clef::cli::KeptLines::kMostKept - 4, '.');
    kept->keep(big);
    kept->keep("left out\n");
    kept->keep("s\n");  // would fit, but nothing more is kept until half is written
    kept->keep("left out\n");
    std::string flood;
    for (int turns = 0; flood.size() < big.size() && turns < 100000; ++turns) {
      kept->write_kept();
      flood += drained(ends[0]);
    }
    EXPECT_EQ(flood.size(), big.size());
    kept->keep("> after\n");
    kept->write_kept();
    EXPECT_EQ(drained(ends[0]),
              "clef: -v: 3 messages left out here: stderr was not being read\n> after\n");

    // The run's last messages left out: said before what the stream writes next (the summary).
    kept->keep(big);
    kept->keep("left out\n");
    std::string tail;
    std::thread reader([&] {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (std::chrono::steady_clock::now() < deadline &&
             tail.find("clef: summary\n") == std::string::npos) {
        pollfd ready{ends[0], POLLIN, 0};
        ::poll(&ready, 1, 100);
        tail += drained(ends[0]);
        if (tail.size() > 4096) tail.erase(0, tail.size() - 4096);
      }
    });
    std::ostream err(&stderr_buffer);
    err << "clef: summary\n" << std::flush;
    reader.join();
    const std::string expected_tail =
        "clef: -v: 1 messages left out here: stderr was not being read\nclef: summary\n";
    ASSERT_GE(tail.size(), expected_tail.size());
    EXPECT_EQ(tail.substr(tail.size() - expected_tail.size()), expected_tail);
  }
  ::close(ends[0]);
  ::close(ends[1]);
}

bool is_fifo(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode);
}

/// True once process `pid` holds an open file descriptor on `path`.
bool holds_open(pid_t pid, const std::string& path) {
  const std::string wanted = std::filesystem::weakly_canonical(path).string();
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
    std::error_code ignored;
    if (std::filesystem::read_symlink(entry.path(), ignored).string() == wanted) return true;
  }
  return false;
}

/// Shard outputs of `input` (`count` ways) against `server`; their paths.
std::vector<std::string> shards_of(const FakeServer& server, const std::string& input,
                                   std::size_t count, const std::string& tag) {
  std::vector<std::string> shards;
  for (std::size_t k = 0; k < count; ++k) {
    const std::string out = fresh_path(tag + "." + std::to_string(k) + ".jsonl");
    auto run = run_clef(batch_args(server.base_url(), input, out,
                                   {"--shard", std::to_string(k) + "/" + std::to_string(count)}));
    EXPECT_EQ(run.code, 0) << run.err;
    shards.push_back(out);
  }
  return shards;
}

std::vector<std::string> merge_args(const std::vector<std::string>& shards,
                                    const std::string& output,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"merge"};
  args.insert(args.end(), shards.begin(), shards.end());
  args.insert(args.end(), {"-o", output});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliStreams, ADirectoryWhereAFileBelongsIsRefusedWithTheSystemsReasonNeverAnAbort) {
  FakeServer server;
  const std::string directory = fresh_directory("a_directory");
  const std::string tickets = write_temp_file("dir_tickets.jsonl", jsonl_tickets(4));
  const auto shards = shards_of(server, tickets, 2, "dir_shard");
  const std::string gold =
      write_temp_file("dir_gold.jsonl", "{\"id\":1,\"state\":\"x\",\"g\":\"yes\"}\n");
  const std::vector<std::vector<std::string>> commands = {
      batch_args(server.base_url(), directory, fresh_path("dir_out.jsonl")),
      {"eval", directory, "--yes-no", "urgent: U?", "--label", "urgent=g", "--host",
       server.base_url()},
      {"eval", gold, "--yes-no", "urgent: U?", "--label", "urgent=g", "--from-results", directory},
      {"ask", "x", "--replay", directory, "--yes-no", "urgent: U?", "--host", server.base_url()},
      merge_args({shards[0], directory}, fresh_path("dir_merged.jsonl")),
      merge_args(shards, fresh_path("dir_merged2.jsonl"), {"--input", directory}),
  };
  for (const auto& args : commands) {
    // A child: an abort (libstdc++ throwing from a read of a directory) ends it with a signal.
    const auto run = run_clef_child(args, 30s);
    ASSERT_TRUE(run.finished) << args[0] << " " << args[1];
    EXPECT_EQ(run.code, 2) << args[0] << " " << args[1] << ": " << run.err;
    EXPECT_NE(run.err.find("Is a directory"), std::string::npos) << run.err;
  }
  // The library: a cassette that is a directory is an error, as the mock's --cassette reads it.
  auto replay = clef::make_replay_transport(directory, "test");
  ASSERT_FALSE(replay);
  EXPECT_NE(replay.error().message.find("Is a directory"), std::string::npos);
  // A stream that fails mid-read is bad(), not an exception.
  std::ifstream as_file(directory);
  clef::Line line;
  EXPECT_FALSE(clef::read_line(as_file, line, 100));
  EXPECT_TRUE(as_file.bad());
}

TEST(CliStreams, ResumeIntoAFifoIsRefusedWithoutWaitingForAReader) {
  // --resume reads OUTPUT back, which a FIFO cannot give: refused at once, not once a reader
  // opens the FIFO (no reader ever does here).
  FakeServer server;
  const std::string fifo = fresh_fifo("resume_out.fifo");
  const auto run = run_clef_child(
      batch_args(server.base_url(), write_temp_file("resume_fifo_in.jsonl", jsonl_tickets(3)), fifo,
                 {"--resume"}),
      10s);
  ASSERT_TRUE(run.finished) << "it waited for the FIFO's reader";
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_NE(run.err.find("--resume reads OUTPUT back"), std::string::npos) << run.err;
  EXPECT_EQ(server.request_count(), 0);
}

TEST(CliStreams, AFifoInputIsReadOnceWholeAndNeverSharded) {
  FakeServer server;
  const int n = 3000;  // far more than one pipe buffer: a count or a hash first would take lines
  for (const bool sharded : {false, true}) {
    const std::string fifo = fresh_fifo(sharded ? "in_sharded.fifo" : "in.fifo");
    const std::string out = fresh_path(sharded ? "fifo_sharded_out.jsonl" : "fifo_out.jsonl");
    std::thread writer([&] {
      std::ofstream to(fifo, std::ios::binary);  // waits for clef to open it
      to << jsonl_tickets(n);
    });
    auto extra = sharded ? std::vector<std::string>{"--shard", "0/2", "-j", "16"}
                         : std::vector<std::string>{"-j", "16"};
    auto run = run_clef(batch_args(server.base_url(), fifo, out, extra));
    if (sharded) {
      // Refused before reading: unblock the writer by reading what it wrote.
      std::ifstream drain(fifo, std::ios::binary);
      std::string rest((std::istreambuf_iterator<char>(drain)), std::istreambuf_iterator<char>());
    }
    writer.join();
    if (sharded) {
      EXPECT_EQ(run.code, 2) << run.err;
      EXPECT_NE(run.err.find("--shard reads a regular file"), std::string::npos) << run.err;
      continue;
    }
    EXPECT_EQ(run.code, 0) << run.err;
    std::set<std::string> ids;
    for (const auto& line : lines_of(read_file(out))) ids.insert(line["id"].get<std::string>());
    EXPECT_EQ(ids.size(), static_cast<std::size_t>(n));
  }
}

TEST(CliStreams, AJsonlFileWithAnotherExtensionIsRecognisedByItsLinesAndSaidSo) {
  FakeServer server;
  struct Case {
    std::string name, content, format;
  };
  for (const Case& c : {Case{"tickets.dat", jsonl_tickets(6), "jsonl"},
                        Case{"tickets.LOG", "\xEF\xBB\xBF  " + jsonl_tickets(6), "jsonl"},
                        Case{"notes.dat", "the printer is on fire\nand so is the fax\n", "text"},
                        Case{"brace.dat", "{not json at all\nsecond\n", "text"},
                        Case{"upper.JSONL", jsonl_tickets(6), ""}}) {
    const std::string input = write_temp_file(c.name, c.content);
    const std::string out = fresh_path(c.name + ".out.jsonl");
    auto run = run_clef(batch_args(server.base_url(), input, out, {"--ordered"}));
    EXPECT_EQ(run.code, 0) << c.name << ": " << run.err;
    const auto lines = lines_of(read_file(out));
    if (c.format == "jsonl" || c.format.empty()) {
      ASSERT_EQ(lines.size(), 6u) << c.name;
      EXPECT_TRUE(lines[0]["id"].is_string()) << c.name;  // "T0", not a line number
    } else {
      ASSERT_EQ(lines.size(), 2u) << c.name;
      EXPECT_EQ(lines[0]["id"], 1) << c.name;
    }
    if (c.format.empty()) {
      EXPECT_EQ(run.err.find("note: reading"), std::string::npos) << run.err;  // the name said it
    } else {
      EXPECT_NE(run.err.find("as " + c.format), std::string::npos) << c.name << ": " << run.err;
    }
  }
}

TEST(CliStreams, MergeWritesWhatOutputNamesInPlaceAndNeverReplacesAnInput) {
  FakeServer server;
  const std::string input = write_temp_file("merge_targets.jsonl", jsonl_tickets(40));
  const auto shards = shards_of(server, input, 3, "merge_targets");
  const std::string expected = [&] {
    const std::string whole = fresh_path("merge_targets_whole.jsonl");
    EXPECT_EQ(run_clef(merge_args(shards, whole)).code, 0);
    return read_file(whole);
  }();
  ASSERT_EQ(lines_of(expected).size(), 40u);

  // A FIFO stays a FIFO, and its reader gets every line.
  const std::string fifo = fresh_fifo("merged.fifo");
  std::string received;
  std::thread reader([&] {
    std::ifstream from(fifo, std::ios::binary);
    received.assign(std::istreambuf_iterator<char>(from), std::istreambuf_iterator<char>());
  });
  auto to_fifo = run_clef(merge_args(shards, fifo, {"--overwrite"}));
  reader.join();
  EXPECT_EQ(to_fifo.code, 0) << to_fifo.err;
  EXPECT_EQ(received, expected);
  EXPECT_TRUE(is_fifo(fifo));

  // A link to a file: the file it names is replaced, the link stays a link.
  const std::string target = write_temp_file("merge_link_target.jsonl", "old\n");
  const std::string link = fresh_path("merge_link.jsonl");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_EQ(run_clef(merge_args(shards, link, {"--overwrite"})).code, 0);
  EXPECT_EQ(read_file(target), expected);
  EXPECT_TRUE(std::filesystem::is_symlink(link));

  // Any input under any name: a shard, its run record, the input, through a link.
  const std::string shard_link = fresh_path("merge_shard_link.jsonl");
  ASSERT_EQ(::symlink(shards[1].c_str(), shard_link.c_str()), 0);
  for (const std::string& output : {shards[1], shards[0] + ".clef-run.json", input, shard_link}) {
    const std::string before = read_file(output);
    auto run = run_clef(merge_args(shards, output, {"--overwrite"}));
    EXPECT_EQ(run.code, 2) << output;
    EXPECT_NE(run.err.find("which clef reads"), std::string::npos) << run.err;
    EXPECT_EQ(read_file(output), before) << output;
  }

  // /dev/stdout is stdout: its lines reach the file the shell opened, and /dev is untouched.
  const std::string captured = fresh_path("merge_stdout.jsonl");
  const pid_t child = spawn_clef(merge_args(shards, "/dev/stdout"), captured);
  EXPECT_EQ(clef::testing::wait_for_exit(child), 0);
  EXPECT_EQ(read_file(captured), expected);
  EXPECT_TRUE(std::filesystem::is_symlink("/dev/stdout"));

  // A stdout that cannot take the lines: exit 7, and no summary claiming they were written.
  const std::string said = fresh_path("merge_full.err");
  const pid_t full = spawn_clef(merge_args(shards, "-"), "/dev/full", said);
  EXPECT_EQ(clef::testing::wait_for_exit(full), 7);
  EXPECT_EQ(read_file(said).find("every one once"), std::string::npos) << read_file(said);
}

/// Runs `command` with sh (its paths need no quoting), `clef` standing for the clef executable,
/// with a 20 s limit; its exit code.
int shell(const std::string& command) {
  // stderr goes nowhere, unless the command says where.
  const std::string quiet = command.find("2>") == std::string::npos ? " 2>/dev/null" : "";
  const int status =
      std::system(("timeout 20 " + std::string(CLEF_EXE) + " " + command + quiet).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CliStreams, NoOutputIsAFileTheCommandReads) {
  FakeServer server;
  const std::string host = server.base_url();
  const std::string tickets = jsonl_tickets(200);
  // stdout appended to the input: the batch read its own lines for ever (100 MB in 5 s).
  const std::string input = write_temp_file("own_output.jsonl", tickets);
  EXPECT_EQ(shell("batch " + input + " --host " + host + " --yes-no u:U? >> " + input), 2);
  EXPECT_EQ(read_file(input), tickets);
  EXPECT_EQ(
      shell("batch " + input + " -o /dev/stdout --host " + host + " --yes-no u:U? >> " + input), 2);
  EXPECT_EQ(read_file(input), tickets);
  // -o naming a file the batch reads: the input, a questions file, the hosts file.
  const std::string questions =
      write_temp_file("own_questions.json", R"({"u": {"type": "noul", "instructions": "U?"}})");
  const std::string hosts = write_temp_file("own_hosts.txt", host + "\n");
  for (const auto& [output, extra] : std::vector<std::pair<std::string, std::string>>{
           {input, ""}, {questions, ""}, {hosts, "--hosts"}}) {
    std::vector<std::string> args = {"batch", input, "-o", output, "--overwrite", "-q", questions};
    if (extra.empty()) {
      args.insert(args.end(), {"--host", host});
    } else {
      args.insert(args.end(), {extra, hosts});
    }
    const std::string before = read_file(output);
    auto run = run_clef(args);
    EXPECT_EQ(run.code, 2) << output << ": " << run.err;
    EXPECT_NE(run.err.find("which clef reads"), std::string::npos) << run.err;
    EXPECT_EQ(read_file(output), before);
  }
  // clef eval: a report or a policy over the labelled data.
  const std::string data =
      write_temp_file("own_data.jsonl", "{\"id\":\"a\",\"state\":\"x\",\"gold\":\"yes\"}\n");
  for (const char* flag : {"--report-json", "--report-md", "--report-html", "--policy-out"}) {
    auto run = run_clef(
        {"eval", data, "--yes-no", "u: U?", "--label", "u=gold", "--host", host, flag, data});
    EXPECT_EQ(run.code, 2) << flag << ": " << run.err;
    EXPECT_EQ(read_file(data), "{\"id\":\"a\",\"state\":\"x\",\"gold\":\"yes\"}\n");
  }
  // Two outputs that are one file; stderr appended to the input.
  auto twice = run_clef({"eval", data, "--yes-no", "u: U?", "--label", "u=gold", "--host", host,
                         "--report-json", fresh_path("own_r.json"), "--report-md",
                         fresh_path("own_r.json")});
  EXPECT_EQ(twice.code, 2) << twice.err;
  EXPECT_NE(twice.err.find("are one file"), std::string::npos) << twice.err;
  EXPECT_EQ(shell("batch " + input + " -o " + fresh_path("own_err.jsonl") + " --host " + host +
                  " --yes-no u:U? -v 2>> " + input),
            2);
  // Only the refusal itself reached it (stderr is where errors go).
  const std::string after = read_file(input);
  EXPECT_EQ(after.rfind(tickets, 0), 0u);
  EXPECT_NE(after.find("stderr (/dev/stderr) is the input", tickets.size()), std::string::npos);
  EXPECT_LT(after.size(), tickets.size() + 400);
  // stderr appended to the output, or to the cassette: refused, no result among the messages.
  for (const std::string& flag : {std::string("-o"), std::string("--record")}) {
    const std::string target = fresh_path("own_err_target.jsonl");
    const std::string output = flag == "-o" ? target : fresh_path("own_err_out.jsonl");
    EXPECT_EQ(shell("batch " + input + " -o " + output + " --host " + host + " --yes-no u:U? " +
                    (flag == "--record" ? "--record " + target : "") + " -v 2>> " + target),
              2)
        << flag;
    const std::string written = read_file(target);
    EXPECT_NE(written.find("stderr is"), std::string::npos) << flag << ": " << written;
    EXPECT_EQ(written.find("\"answers\""), std::string::npos) << flag << ": " << written;
  }
  // clef merge -o - appended to one of its shards.
  const std::string merge_input = write_temp_file("own_merge.jsonl", jsonl_tickets(20));
  const auto shards = shards_of(server, merge_input, 2, "own_merge");
  const std::string shard_before = read_file(shards[1]);
  EXPECT_EQ(shell("merge " + shards[0] + " " + shards[1] + " -o - >> " + shards[1]), 2);
  EXPECT_EQ(read_file(shards[1]), shard_before);
}

TEST(CliStreams, AFifoWhoseReaderLeavesEndsTheBatchAndDescriptorsKeepTheirPlace) {
  FakeServer server;
  const std::string input = write_temp_file("leaving_reader.jsonl", jsonl_tickets(3000));
  const std::string fifo = fresh_fifo("leaving_reader.fifo");
  // The reader takes 1,000 bytes and leaves: the next write fails (EPIPE), exit 7, at once.
  std::thread reader([&] {
    std::ifstream from(fifo, std::ios::binary);
    char some[1000];
    from.read(some, sizeof some);
  });
  const auto run = run_clef_child(batch_args(server.base_url(), input, fifo, {"--overwrite"}), 30s);
  reader.join();
  ASSERT_TRUE(run.finished) << "a FIFO whose reader left held the batch";
  EXPECT_EQ(run.code, 7) << run.err;
  // -o /dev/stdout appended to a file: written at its end, through the shell's descriptor.
  const std::string kept = write_temp_file("descriptor_out.jsonl", "kept\n");
  EXPECT_EQ(shell("batch " + input + " -o /dev/stdout --host " + server.base_url() +
                  " --yes-no u:U? --ordered >> " + kept),
            0);
  const std::string written = read_file(kept);
  EXPECT_EQ(written.rfind("kept\n", 0), 0u) << written.substr(0, 100);
  EXPECT_EQ(lines_of(written.substr(5)).size(), 3000u);
  // A link that dangles, merge and batch alike: the file it names is made.
  const std::string target = fresh_path("dangling_target.jsonl");
  const std::string link = fresh_path("dangling_link.jsonl");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  const auto shards =
      shards_of(server, write_temp_file("dangling.jsonl", jsonl_tickets(10)), 2, "dangling");
  EXPECT_EQ(run_clef(merge_args(shards, link)).code, 0);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(lines_of(read_file(target)).size(), 10u);
}

TEST(CliStreams, ARunThroughALinkKeepsItsRecordBesideTheFileSoEitherNameResumes) {
  // -o LINK writes the file the link names, and its run record goes beside that file: a
  // --resume under either name finds it (it used to sit beside the link), and a --resume
  // through the link rewrites the file, not the link (it used to put a file where the link was
  // and leave the one it named behind, stale and unlocked).
  FakeServer server;
  const std::string input = write_temp_file("record_link_in.jsonl", jsonl_tickets(20));
  const std::string target = fresh_path("record_link_target.jsonl");
  const std::string link = fresh_path("record_link.jsonl");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto first = run_clef(batch_args(server.base_url(), input, link));
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_TRUE(std::filesystem::exists(target + ".clef-run.json"));
  EXPECT_FALSE(std::filesystem::exists(link + ".clef-run.json"));
  const std::string written = read_file(target);
  ASSERT_EQ(lines_of(written).size(), 20u);
  std::size_t end = 0;
  for (int i = 0; i < 5; ++i) end = written.find('\n', end) + 1;
  for (const std::string& name : {link, target}) {
    // Cut back to its first 5 lines, as a run stopped early leaves it.
    std::ofstream(target, std::ios::trunc) << written.substr(0, end);
    const int sent = server.request_count();
    auto resumed = run_clef(batch_args(server.base_url(), input, name, {"--resume"}));
    EXPECT_EQ(resumed.code, 0) << name << ": " << resumed.err;
    EXPECT_TRUE(std::filesystem::is_symlink(link)) << name;
    EXPECT_EQ(lines_of(read_file(target)).size(), 20u) << name;
    EXPECT_EQ(server.request_count() - sent, 15) << name << ": the 5 kept lines were asked again";
  }
}

TEST(CliStreams, MergeRefusesRepeatedIdsAndSaysWhatItLeftOut) {
  FakeServer server;
  // An id the input repeats: its lines cannot be put back in order (they were swapped).
  std::string repeated;
  for (int i = 0; i < 6; ++i)
    repeated += "{\"id\":\"A\",\"state\":\"dup " + std::to_string(i) + "\"}\n";
  repeated += jsonl_tickets(10);
  const auto dup_shards =
      shards_of(server, write_temp_file("merge_repeated.jsonl", repeated), 2, "merge_repeated");
  auto merged = run_clef(merge_args(dup_shards, fresh_path("merge_repeated_out.jsonl")));
  EXPECT_EQ(merged.code, 2) << merged.err;
  EXPECT_NE(merged.err.find("more than one line for the id \"A\""), std::string::npos)
      << merged.err;
  // Named by the shard that holds them, whichever is given first.
  const std::string holder = dup_shards[clef::shard_of("\"A\"", 2)];
  EXPECT_NE(merged.err.find(holder), std::string::npos) << merged.err;
  auto reversed = run_clef(
      merge_args({dup_shards[1], dup_shards[0]}, fresh_path("merge_repeated_reversed.jsonl")));
  EXPECT_EQ(reversed.code, 2) << reversed.err;
  EXPECT_NE(reversed.err.find(holder), std::string::npos) << reversed.err;
  // Lines that are no result lines are left out, and said to be.
  const auto shards =
      shards_of(server, write_temp_file("merge_junk.jsonl", jsonl_tickets(10)), 2, "merge_junk");
  std::ofstream(shards[0], std::ios::app) << "not json\n{\"foo\":1}\n[1,2]\n{\"id\":null}\n";
  auto junk = run_clef(merge_args(shards, fresh_path("merge_junk_out.jsonl")));
  EXPECT_EQ(junk.code, 0) << junk.err;
  EXPECT_NE(junk.err.find("4 line(s) of the shards are not result lines"), std::string::npos)
      << junk.err;
  // A shard's output resumed without --shard would become the whole run's: refused.
  auto resumed =
      run_clef(batch_args(server.base_url(), write_temp_file("merge_junk.jsonl", jsonl_tickets(10)),
                          shards[1], {"--resume"}));
  EXPECT_EQ(resumed.code, 2) << resumed.err;
  EXPECT_NE(resumed.err.find("shard: was \"1/2\", now none"), std::string::npos) << resumed.err;
}

TEST(CliStreams, MergesTemporaryFileIsNeitherPredictableNorFollowedThroughALink) {
  FakeServer server;
  const std::string input = write_temp_file("merge_temp.jsonl", jsonl_tickets(10));
  const auto shards = shards_of(server, input, 2, "merge_temp");
  const std::string output = fresh_path("merge_temp_out.jsonl");
  const std::string victim = write_temp_file("merge_victim.txt", "precious\n");
  // Links planted at every name a fixed-name scheme would use.
  for (const char* suffix : {".clef-merge", ".tmp", ".clef-resume"}) {
    const std::string planted = output + suffix;
    std::remove(planted.c_str());
    ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  }
  EXPECT_EQ(run_clef(merge_args(shards, output)).code, 0);
  EXPECT_EQ(read_file(victim), "precious\n");
  EXPECT_EQ(lines_of(read_file(output)).size(), 10u);
  // Nothing left beside it but the planted links.
  std::size_t left = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(output).parent_path())) {
    if (entry.path().string().rfind(output + ".clef-", 0) == 0 &&
        !std::filesystem::is_symlink(entry.path()))
      ++left;
  }
  EXPECT_EQ(left, 0u);
}

TEST(CliStreams, WaitsOnAFifoEndAtSigint) {
  FakeServer server;
  const std::string input = write_temp_file("sigint_tickets.jsonl", jsonl_tickets(20));
  const auto shards = shards_of(server, input, 2, "sigint");
  struct Case {
    std::string what;
    std::vector<std::string> args;
    std::function<bool(pid_t)> waiting;  ///< True once the child is where it waits.
  };
  const std::string no_writer = fresh_fifo("sigint_no_writer.fifo");
  const std::string no_reader = fresh_fifo("sigint_no_reader.fifo");
  const std::string batch_no_reader = fresh_fifo("sigint_batch_no_reader.fifo");
  const std::string input_fifo = fresh_fifo("sigint_input.fifo");
  const std::string state_fifo = fresh_fifo("sigint_state.fifo");
  const std::string questions_fifo = fresh_fifo("sigint_questions.fifo");
  const std::string many = write_temp_file("sigint_many.jsonl", jsonl_tickets(3000));
  const auto holds = [](const std::string& path) {
    return [path](pid_t child) { return holds_open(child, path); };
  };
  const std::vector<Case> cases = {
      {"batch reading a FIFO no one writes",
       batch_args(server.base_url(), no_writer, fresh_path("sigint_out.jsonl")), holds(no_writer)},
      {"merge writing to a FIFO no one reads", merge_args(shards, no_reader), holds(shards[0])},
      {"merge reading its input from a FIFO no one writes",
       merge_args(shards, fresh_path("sigint_merged.jsonl"), {"--input", input_fifo}),
       holds(input_fifo)},
      {"ask reading its state from a FIFO no one writes",
       {"ask", "--state-file", state_fifo, "--yes-no", "u: U?", "--host", server.base_url()},
       holds(state_fifo)},
      {"batch reading its questions from a FIFO no one writes",
       {"batch", input, "-o", fresh_path("sigint_q_out.jsonl"), "-q", questions_fifo, "--host",
        server.base_url()},
       holds(questions_fifo)},
      // A FIFO no one reads: the batch waits for a reader before it sends anything (it holds
      // its input open meanwhile).
      {"batch writing to a FIFO no one reads",
       batch_args(server.base_url(), many, batch_no_reader, {"--overwrite"}), holds(many)},
  };
  const int sent_before = server.request_count();
  for (const Case& c : cases) {
    const pid_t child = spawn_clef(c.args);
    ASSERT_GT(child, 0);
    if (!wait_until([&] { return c.waiting(child); }, c.what, 30s)) {
      ::kill(child, SIGKILL);
      wait_for_child(child, 10s);
      continue;
    }
    ::kill(child, SIGINT);
    const auto ended = wait_for_child(child, 10s);
    EXPECT_TRUE(ended.finished) << c.what << ": SIGINT did not end it";
    EXPECT_EQ(ended.code, 130) << c.what;
  }
  EXPECT_TRUE(is_fifo(no_reader));
  EXPECT_TRUE(is_fifo(batch_no_reader));
  EXPECT_FALSE(std::filesystem::exists(batch_no_reader + ".clef-run.json"));
  EXPECT_EQ(server.request_count(), sent_before);  // nothing sent for a reader that never came
}

/// Opens `fifo` for writing (waiting for its reader), writes `text` and keeps it open until
/// `release` is set or 60 s pass: a pipe whose writer is slow to send the next line.
std::thread slow_writer(const std::string& fifo, const std::string& text,
                        const std::atomic<bool>& release) {
  return std::thread([fifo, text, &release] {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    wait_until([&] { return release.load(); }, "the test to release the writer", 60s);
    ::close(fd);
  });
}

// A pipe's writer that is slow to send the next line holds back neither the results of the
// lines already sent (they are written as they are answered) nor a stop the run decided (no
// server: the run ends at once, not when the next line comes).
TEST(CliStreams, ASlowWriterHoldsBackNeitherResultsNorAStop) {
  FakeServer server;
  {
    const std::string fifo = fresh_fifo("slow_writer.fifo");
    const std::string out = fresh_path("slow_writer_out.jsonl");
    std::atomic<bool> release{false};
    std::thread writer = slow_writer(fifo, jsonl_tickets(3), release);
    const pid_t child = spawn_clef(batch_args(server.base_url(), fifo, out, {"-j", "16"}));
    ASSERT_GT(child, 0);
    const auto written = [&] {
      const std::string text = read_file(out);
      return std::count(text.begin(), text.end(), '\n');
    };
    EXPECT_TRUE(wait_until([&] { return written() == 3; },
                           "three lines written while the writer holds the pipe open", 30s));
    release = true;
    writer.join();
    const auto ended = wait_for_child(child, 30s);
    EXPECT_TRUE(ended.finished);
    EXPECT_EQ(ended.code, 0);
  }
  {
    const std::string fifo = fresh_fifo("slow_writer_down.fifo");
    const std::string out = fresh_path("slow_writer_down.jsonl");
    std::atomic<bool> release{false};
    // Two failed connections in a row at -j 1 is a server that is not there: the run stops.
    std::thread writer = slow_writer(fifo, jsonl_tickets(2), release);
    const pid_t child =
        spawn_clef({"batch", fifo, "-o", out, "--yes-no", "u: U?", "--retries", "0", "-j", "1",
                    "--host", "127.0.0.1:" + std::to_string(clef::testing::refusing_port())});
    ASSERT_GT(child, 0);
    const auto ended = wait_for_child(child, 20s);  // the writer still holds the pipe open
    release = true;
    writer.join();
    EXPECT_TRUE(ended.finished) << "the stop waited for the writer";
    EXPECT_EQ(ended.code, 5);
    EXPECT_LT(ended.elapsed, 10s);
  }
}

// A stop (SIGINT, or the run ending early) that comes while a line is being read: the part read
// so far is not a line, and not an item. It once was, written out as a failed item ("the line is
// not valid JSON (it ends too early: truncated?)") for a line the input never cut off, when the
// signal came mid-line (long lines, a --resume skipping done ones); a CSV record whose quoted
// field had not ended was taken as it was.
TEST(CliStreams, AReadStoppedInsideALineGivesNeitherALineNorAnItem) {
  const std::vector<std::pair<std::string, clef::cli::InputFormat>> cases = {
      {R"({"id": "T0", "state": "whole"})"
       "\n"
       R"({"id": "T1", "state": {"ticket": "half of it)",
       clef::cli::InputFormat::jsonl},
      {"id,state\nT0,whole\nT1,\"a field that goes on\nto a next", clef::cli::InputFormat::csv},
  };
  for (const auto& [text, format] : cases) {
    const std::string path = write_temp_file("stopped_inside_a_line.txt", text);
    std::atomic<bool> stop{false};
    std::istringstream unused;
    auto input = clef::cli::InputFile::open(path, "the input", unused, &stop);
    ASSERT_TRUE(input) << input.error().to_string();
    auto reader = clef::cli::make_reader(input->stream(), format, {});
    ASSERT_TRUE(reader) << reader.error().to_string();
    auto first = (*reader)->next();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->id, "T0");
    stop = true;  // the rest is in the buffer already; the next read(2) would find the end
    const auto second = (*reader)->next();
    EXPECT_FALSE(second) << "a line cut off by the stop became item " << second->line;
    const auto failure = input->failure();
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->kind, clef::ErrorKind::cancelled) << failure->to_string();
  }
  // Without a stop, a last line the file itself cuts off is still an item (a failed one).
  const std::string cut = write_temp_file("cut_by_the_file.jsonl", R"({"id": "T0", "sta)");
  std::istringstream unused;
  std::atomic<bool> stop{false};
  auto input = clef::cli::InputFile::open(cut, "the input", unused, &stop);
  ASSERT_TRUE(input);
  auto reader = clef::cli::make_reader(input->stream(), clef::cli::InputFormat::jsonl, {});
  ASSERT_TRUE(reader);
  const auto last = (*reader)->next();
  ASSERT_TRUE(last);
  EXPECT_FALSE(last->state.ok());
  EXPECT_FALSE(input->failure());
}

// SIGINT while the last answers are in flight: they are waited for and written, and the end
// says there is nothing left to resume (it used to say "run again with --resume to finish the
// rest" after every line was written). A run stopped with items left still says to resume.
TEST(CliStreams, ASignalAfterTheLastItemWasSentSaysNothingIsLeft) {
  FakeServer server;
  for (const bool all_sent : {true, false}) {
    // Every answer waits at the server until the run has said it was interrupted.
    HeldAnswers held(server, 0);
    const int count = all_sent ? 3 : 40;
    const std::string input = write_temp_file("signal_at_the_end.jsonl", jsonl_tickets(count));
    const std::string out = fresh_path("signal_at_the_end.out.jsonl");
    const std::string err = fresh_path("signal_at_the_end.err");
    const pid_t child = spawn_clef(batch_args(server.base_url(), input, out, {"-j", "4"}), "", err);
    ASSERT_GT(child, 0);
    EXPECT_TRUE(wait_until([&] { return held.waiting() >= std::min(count, 4); },
                           "the first requests at the server", 30s));
    ::kill(child, SIGINT);
    EXPECT_TRUE(wait_until([&] { return read_file(err).find("interrupted") != std::string::npos; },
                           "clef batch saying it was interrupted", 30s));
    held.release();
    const auto ended = wait_for_child(child, 30s);
    EXPECT_TRUE(ended.finished);
    EXPECT_EQ(ended.code, 130);
    const std::string said = read_file(err);
    const bool nothing_left = said.find("nothing is left for --resume") != std::string::npos;
    EXPECT_EQ(nothing_left, all_sent) << said;
    EXPECT_EQ(said.find("run again with --resume") != std::string::npos, !all_sent) << said;
    EXPECT_EQ(lines_of(read_file(out)).size(), all_sent ? 3u : 4u);
  }
}

TEST(CliStreams, TheMocksFilesAreFilesNotFifos) {
  const std::string fifo = fresh_fifo("mock_files.fifo");
  for (const char* flag : {"--rules", "--cassette", "--log"}) {
    const auto run = run_clef_child({"mock", "--port", "0", flag, fifo}, 20s);
    ASSERT_TRUE(run.finished) << flag << " held clef mock";
    EXPECT_EQ(run.code, 2) << flag << ": " << run.err;
  }
  const std::string cassette = fresh_fifo("replay.fifo");
  const auto replay = run_clef_child({"ask", "x", "--yes-no", "u: U?", "--replay", cassette}, 20s);
  ASSERT_TRUE(replay.finished);
  EXPECT_EQ(replay.code, 2) << replay.err;
}

TEST(CliStreams, AnEndlessLineEndsTheReadingInsteadOfHoldingIt) {
  FakeServer server;
  // /dev/zero has no newline: after the line cap, and 8 times more read past, the input ends
  // with an error naming it, instead of reading for ever.
  const auto run =
      run_clef_child(batch_args(server.base_url(), "/dev/zero", fresh_path("zero_out.jsonl"),
                                {"--input-format", "text"}),
                     60s);
  ASSERT_TRUE(run.finished);
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_NE(run.err.find("cannot read the input to the end"), std::string::npos) << run.err;
  EXPECT_EQ(server.request_count(), 0);
}

TEST(CliStreams, MergeHoldsAnIndexOfTheShardsNotTheirLines) {
  FakeServer server;
  // 240 result lines of 160 KB each: 38 MB of shards.
  std::string tickets;
  const std::string filler(160 * 1024, 'x');
  for (int i = 0; i < 240; ++i)
    tickets +=
        "{\"id\":\"big" + std::to_string(i) + "\",\"state\":\"" + filler.substr(0, 8000) + "\"}\n";
  const std::string input = write_temp_file("merge_memory.jsonl", tickets);
  std::vector<std::string> shards;
  for (int k = 0; k < 2; ++k) {
    const std::string out = fresh_path("merge_memory." + std::to_string(k) + ".jsonl");
    // Each result line carries its state back (an error line quoting the request would too):
    // the mock echoes nothing, so the lines are padded here the way a big answer would be.
    auto run = run_clef(batch_args(server.base_url(), input, out,
                                   {"--shard", std::to_string(k) + "/2", "-j", "8"}));
    ASSERT_EQ(run.code, 0) << run.err;
    std::string padded;
    for (auto line : lines_of(read_file(out))) {
      line["padding"] = filler;
      padded += line.dump() + "\n";
    }
    std::ofstream(out, std::ios::binary | std::ios::trunc) << padded;
    shards.push_back(out);
  }
  const std::string output = fresh_path("merge_memory_out.jsonl");
  const auto run = run_clef_child(merge_args(shards, output), 60s);
  ASSERT_TRUE(run.finished);
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(lines_of(read_file(output)).size(), 240u);
  // The shards hold 38 MB; a merge that kept them would pass 40 MB. One line (160 KB), the
  // 32 MiB line cap's buffer for the input and the process itself stay under 30 MB. (Under a
  // sanitizer the shadow memory is most of it: the unsanitized run holds the bound.)
  if (!clef::testing::instrumented_build) {
    EXPECT_LT(run.max_rss_kb, 30 * 1024) << "peak RSS " << run.max_rss_kb << " KB";
  }
}

}  // namespace
