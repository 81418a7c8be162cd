// clef batch --shard and clef merge: every id in exactly one shard whatever the input's order,
// the shards merged back into exactly the unsharded run, and what is missing named.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "child_clef.hpp"
#include "clef/batch.hpp"
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
using Json = nlohmann::ordered_json;

std::string test_name() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

/// The ids (as JSON text) of a batch output.
std::set<std::string> ids_in(const std::string& path) {
  std::set<std::string> ids;
  for (const auto& line : lines_of(read_file(path))) ids.insert(line["id"].dump());
  return ids;
}

/// A batch output without its latency figures, which differ from run to run.
std::string without_latency(const std::string& path) {
  std::string out;
  for (auto line : lines_of(read_file(path))) {
    line.erase("latency_ms");
    out += line.dump() + "\n";
  }
  return out;
}

/// Runs shard k of `count` of `input` into a fresh file; its path.
std::string run_shard(const FakeServer& server, const std::string& input, std::size_t k,
                      std::size_t count, const std::string& tag) {
  const std::string out =
      fresh_path("shard_" + test_name() + "_" + tag + "_" + std::to_string(k) + ".jsonl");
  auto run =
      run_clef(batch_args(server.base_url(), input, out,
                          {"-j", "8", "--shard", std::to_string(k) + "/" + std::to_string(count)}));
  EXPECT_EQ(run.code, 0) << run.err;
  return out;
}

TEST(Shard, OfAnIdIsTheFirstEightBytesOfItsSha256ModuloN) {
  // Worked out with Python: int.from_bytes(hashlib.sha256(b'"a"').digest()[:8], 'big') % n.
  EXPECT_EQ(clef::shard_of("\"a\"", 4), 1u);
  EXPECT_EQ(clef::shard_of("\"b\"", 4), 3u);
  EXPECT_EQ(clef::shard_of("\"b\"", 7), 5u);
  EXPECT_EQ(clef::shard_of("1", 1000), 913u);
  EXPECT_EQ(clef::shard_of("\"ticket-42\"", 7), 3u);
  EXPECT_EQ(clef::shard_of("\"a\"", 1), 0u);
  EXPECT_EQ(clef::shard_of("\"a\"", 0), 0u);
}

TEST(CliShard, EachIdInExactlyOneShardWhateverTheOrderAndMergeGivesTheUnshardedRun) {
  FakeServer server;
  const std::string tickets = jsonl_tickets(10000);
  const std::string input = write_temp_file("shard_input.jsonl", tickets);
  std::vector<std::string> shards;
  std::set<std::string> seen;
  std::size_t total = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    shards.push_back(run_shard(server, input, k, 4, "in"));
    const auto ids = ids_in(shards.back());
    total += lines_of(read_file(shards.back())).size();
    for (const auto& id : ids) EXPECT_EQ(clef::shard_of(id, 4), k) << id;
    seen.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(seen.size(), 10000u);
  EXPECT_EQ(total, 10000u) << "an id in two shards, or twice in one";

  // The input shuffled: every shard keeps the same ids.
  std::vector<std::string> lines;
  for (const auto& line : lines_of(tickets)) lines.push_back(line.dump());
  std::shuffle(lines.begin(), lines.end(), std::mt19937(7));
  std::string shuffled;
  for (const auto& line : lines) shuffled += line + "\n";
  const std::string reordered = write_temp_file("shard_shuffled.jsonl", shuffled);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(ids_in(run_shard(server, reordered, k, 4, "shuffled")), ids_in(shards[k])) << k;
  }

  // Merged, the shards are the unsharded run, line for line in input order.
  const std::string whole = fresh_path("shard_whole.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), input, whole, {"--ordered"})).code, 0);
  const std::string merged = fresh_path("shard_merged.jsonl");
  std::vector<std::string> args = {"merge"};
  args.insert(args.end(), shards.begin(), shards.end());
  args.insert(args.end(), {"-o", merged});
  auto merge = run_clef(args);
  ASSERT_EQ(merge.code, 0) << merge.err;
  EXPECT_NE(merge.err.find("10000 items from 4 shards"), std::string::npos) << merge.err;
  EXPECT_EQ(without_latency(merged), without_latency(whole));
}

TEST(CliShard, MergeNamesAMissingShardAndItsIdsAndExitsTen) {
  FakeServer server;
  const std::string input = write_temp_file("shard_missing.jsonl", jsonl_tickets(200));
  std::vector<std::string> shards;
  for (std::size_t k = 0; k < 4; ++k) shards.push_back(run_shard(server, input, k, 4, "m"));
  const std::string first_of_shard_2 = lines_of(read_file(shards[2])).front()["id"].dump();
  const std::string merged = fresh_path("shard_missing_merged.jsonl");
  auto merge = run_clef({"merge", shards[0], shards[1], shards[3], "-o", merged});
  EXPECT_EQ(merge.code, 10);
  EXPECT_NE(merge.err.find("no output given for shard(s) 2 of 4"), std::string::npos) << merge.err;
  EXPECT_NE(merge.err.find(first_of_shard_2), std::string::npos) << merge.err;
  EXPECT_NE(merge.err.find("--array=2 "), std::string::npos) << merge.err;
  EXPECT_EQ(read_file(merged), "") << "nothing is written when items are missing";
  // Shard 2's output given but never written (its task lost): the same incomplete run, exit 10,
  // not an error of usage.
  const std::string never = fresh_path("shard_missing_never_written.jsonl");
  auto unwritten = run_clef({"merge", shards[0], shards[1], never, shards[3], "-o", merged});
  EXPECT_EQ(unwritten.code, 10) << unwritten.err;
  EXPECT_NE(unwritten.err.find(never + "\" does not exist"), std::string::npos) << unwritten.err;
  EXPECT_NE(unwritten.err.find("no output given for shard(s) 2 of 4"), std::string::npos)
      << unwritten.err;
  EXPECT_EQ(run_clef({"merge", never, "-o", merged}).code, 10);
  // Every item in the shards given, and one more named that was never written: still exit 10
  // (the list is not the run's), nothing written.
  auto extra = run_clef({"merge", shards[0], shards[1], shards[2], shards[3], never, "-o", merged});
  EXPECT_EQ(extra.code, 10) << extra.err;
  EXPECT_EQ(read_file(merged), "");
  // One line lost from shard 3's output (a torn write): that item, and shard 3, are named.
  std::string kept, lost;
  for (const auto& line : lines_of(read_file(shards[3]))) {
    if (lost.empty()) {
      lost = line["id"].dump();
      continue;
    }
    kept += line.dump() + "\n";
  }
  std::ofstream(shards[3], std::ios::trunc) << kept << "{\"id\": \"T1";
  auto again = run_clef({"merge", shards[0], shards[1], shards[2], shards[3], "-o", merged});
  EXPECT_EQ(again.code, 10);
  EXPECT_NE(again.err.find("1 item(s) have no result: " + lost), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("--array=3 "), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("1 line(s) of the shards are not result lines"), std::string::npos)
      << "the torn line is said when it is why an item is missing: " << again.err;
}

TEST(CliShard, MergeRefusesShardsOfAnotherRunOrInput) {
  FakeServer server;
  server.set_models({"clef-flash", "other"});
  const std::string input = write_temp_file("shard_runs.jsonl", jsonl_tickets(40));
  const std::string a = run_shard(server, input, 0, 2, "a");
  const std::string b = fresh_path("shard_runs_other_model.jsonl");
  ASSERT_EQ(
      run_clef(batch_args(server.base_url(), input, b, {"--shard", "1/2", "-m", "other"})).code, 0);
  auto mixed = run_clef({"merge", a, b, "-o", fresh_path("shard_runs_merged.jsonl")});
  EXPECT_EQ(mixed.code, 2);
  EXPECT_NE(mixed.err.find("is not of the same run"), std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("model"), std::string::npos) << mixed.err;
  // The same shard twice is not two shards.
  auto twice = run_clef({"merge", a, a, "-o", fresh_path("shard_runs_twice.jsonl")});
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("error: the shard output is given twice (shard 0/2)"), std::string::npos)
      << "said with its subject: " << twice.err;
  // A run record whose "shard" is not text (edited by hand) is said to be so, not "no --shard".
  const std::string edited = write_temp_file("shard_runs_edited.jsonl", read_file(a));
  Json record = Json::parse(read_file(a + ".clef-run.json"));
  record["shard"] = 5;
  write_temp_file("shard_runs_edited.jsonl.clef-run.json", record.dump());
  auto not_text = run_clef({"merge", edited, b, "-o", fresh_path("shard_runs_edited_out.jsonl")});
  EXPECT_EQ(not_text.code, 2);
  EXPECT_NE(not_text.err.find("the run record's \"shard\" is not text"), std::string::npos)
      << not_text.err;
  // Two outputs of the same shard (a rerun written elsewhere) are one shard too.
  const std::string a_again = run_shard(server, input, 0, 2, "a_again");
  auto same_shard = run_clef({"merge", a, a_again, "-o", fresh_path("shard_runs_same.jsonl")});
  EXPECT_EQ(same_shard.code, 2);
  EXPECT_NE(same_shard.err.find("is shard 0/2, the same shard as " + a), std::string::npos)
      << same_shard.err;
  // Another input than the one the shards read.
  const std::string c = run_shard(server, input, 1, 2, "c");
  const std::string changed = write_temp_file("shard_runs_changed.jsonl", jsonl_tickets(41));
  auto other_input =
      run_clef({"merge", a, c, "--input", changed, "-o", fresh_path("shard_runs_in.jsonl")});
  EXPECT_EQ(other_input.code, 2);
  EXPECT_NE(other_input.err.find("is not the input the shards read"), std::string::npos)
      << other_input.err;
  // The input moved since the shards read it: the error says how to name it.
  const std::string moved = fresh_path("shard_runs_moved.jsonl");
  ASSERT_EQ(std::rename(input.c_str(), moved.c_str()), 0);
  auto gone = run_clef({"merge", a, c, "-o", fresh_path("shard_runs_gone.jsonl")});
  EXPECT_EQ(gone.code, 2);
  EXPECT_NE(gone.err.find("give the input the shards read with --input"), std::string::npos)
      << gone.err;
  EXPECT_EQ(
      run_clef({"merge", a, c, "--input", moved, "-o", fresh_path("shard_runs_found.jsonl")}).code,
      0);
  ASSERT_EQ(std::rename(moved.c_str(), input.c_str()), 0);
  // --resume of a shard's output as another shard is refused by its run record.
  auto resumed = run_clef(batch_args(server.base_url(), input, a, {"--shard", "1/2", "--resume"}));
  EXPECT_EQ(resumed.code, 2);
  EXPECT_NE(resumed.err.find("shard: was \"0/2\", now \"1/2\""), std::string::npos) << resumed.err;
}

/// The "shard" a run recorded, after a run with `extra` flags.
std::string recorded_shard(const FakeServer& server, const std::string& input,
                           std::vector<std::string> extra, int expected_code = 0) {
  const std::string out = fresh_path("shard_env_" + test_name() + ".jsonl");
  auto run = run_clef(batch_args(server.base_url(), input, out, std::move(extra)));
  EXPECT_EQ(run.code, expected_code) << run.err;
  if (run.code != 0) return run.err;
  const auto record = Json::parse(read_file(out + ".clef-run.json"));
  return record.value("shard", "(none)");
}

TEST(CliShard, AutoTakesTheIndexFromAKubernetesIndexedJobOrASlurmArray) {
  FakeServer server;
  const std::string input = write_temp_file("shard_env.jsonl", jsonl_tickets(20));
  // Never split unless asked, even inside an array job.
  ::setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
  EXPECT_EQ(recorded_shard(server, input, {}), "(none)");
  EXPECT_EQ(recorded_shard(server, input, {"--shard", "auto"}), "2/4");  // --array=1-4
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto", "--shards", "3"}, 2)
                .find("the Slurm array has 4 tasks"),
            std::string::npos);
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  ::unsetenv("SLURM_ARRAY_TASK_MIN");
  ::setenv("JOB_COMPLETION_INDEX", "1", 1);
  EXPECT_EQ(recorded_shard(server, input, {"--shard", "auto", "--shards", "3"}), "1/3");
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto"}, 2).find("add --shards N"),
            std::string::npos);
  ::setenv("JOB_COMPLETION_INDEX", "3", 1);
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto", "--shards", "3"}, 2)
                .find("shard 3 does not exist"),
            std::string::npos);
  ::unsetenv("JOB_COMPLETION_INDEX");
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto"}, 2).find("none is set"),
            std::string::npos);
  for (const char* bad : {"4/4", "1/0", "-1/4", "1 /4", "a/b", "1/200000"}) {
    EXPECT_NE(recorded_shard(server, input, {"--shard", bad}, 2).find("--shard"), std::string::npos)
        << bad;
  }
}

TEST(CliShard, AutoReadsAwsBatchAndGoogleCloudBatchAndRefusesNomadsIndex) {
  FakeServer server;
  const std::string input = write_temp_file("shard_clouds.jsonl", jsonl_tickets(20));
  // AWS Batch gives the child's index; the array's size is the job's, so --shards says it.
  ::setenv("AWS_BATCH_JOB_ARRAY_INDEX", "2", 1);
  EXPECT_EQ(recorded_shard(server, input, {"--shard", "auto", "--shards", "5"}), "2/5");
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto"}, 2).find("AWS Batch array job"),
            std::string::npos);
  // Two schedulers' indexes at once: which numbers this task is not clear.
  ::setenv("JOB_COMPLETION_INDEX", "1", 1);
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto", "--shards", "5"}, 2)
                .find("two schedulers' indexes (JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX)"),
            std::string::npos);
  ::unsetenv("JOB_COMPLETION_INDEX");
  ::unsetenv("AWS_BATCH_JOB_ARRAY_INDEX");
  // Google Cloud Batch gives both.
  ::setenv("BATCH_TASK_INDEX", "3", 1);
  ::setenv("BATCH_TASK_COUNT", "4", 1);
  EXPECT_EQ(recorded_shard(server, input, {"--shard", "auto"}), "3/4");
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto", "--shards", "5"}, 2)
                .find("has 4 tasks (BATCH_TASK_COUNT), not --shards 5"),
            std::string::npos);
  ::setenv("BATCH_TASK_COUNT", "3", 1);
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto"}, 2).find("shard 3 does not exist"),
            std::string::npos);
  ::unsetenv("BATCH_TASK_COUNT");
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto"}, 2).find("BATCH_TASK_COUNT"),
            std::string::npos);
  ::unsetenv("BATCH_TASK_INDEX");
  // Slurm without _MIN (a hand-made environment): each task would count from its own id and
  // every one be shard 0. Refused.
  ::setenv("SLURM_ARRAY_TASK_ID", "2", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "3", 1);
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto"}, 2).find("SLURM_ARRAY_TASK_MIN"),
            std::string::npos);
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  // Nomad's allocation index can repeat after a reschedule: refused, with the way that works.
  ::setenv("NOMAD_ALLOC_INDEX", "0", 1);
  const std::string nomad = recorded_shard(server, input, {"--shard", "auto", "--shards", "2"}, 2);
  EXPECT_NE(nomad.find("two allocations can have the same index"), std::string::npos) << nomad;
  EXPECT_NE(nomad.find("NOMAD_META_shard"), std::string::npos) << nomad;
  ::unsetenv("NOMAD_ALLOC_INDEX");
}

// Issue 34: four shards sharing one account's 40 requests a second, against a server whose token
// bucket holds 40 a second. Each shard takes 10/s, its first start K/40 s in: together they use
// the bucket (>= 95% of it while all four send) and are almost never refused (< 5%).
TEST(CliShard, ShardsShareOneRateWithoutBurstingIt) {
  FakeServer server;
  clef::MockFaults faults;
  faults.rate_limit = 40;
  server.set_faults(faults);
  std::mutex mutex;
  std::vector<std::chrono::steady_clock::time_point> arrivals;
  // Each shard's first and last request: the rate is measured while all four send.
  std::array<std::chrono::steady_clock::time_point, 4> first{}, last{};
  server.set_script([&](const clef::MockRequest& request, int) -> std::optional<clef::MockReply> {
    const auto now = std::chrono::steady_clock::now();
    const std::size_t at = request.body.find("ticket number ");
    if (at == std::string::npos) return std::nullopt;  // not a decision: not counted
    const std::string id = "T" + std::to_string(std::atoi(request.body.c_str() + at + 14));
    const std::size_t shard = clef::shard_of(Json(id).dump(), 4);
    std::lock_guard<std::mutex> lock(mutex);
    arrivals.push_back(now);
    if (first[shard] == std::chrono::steady_clock::time_point{}) first[shard] = now;
    last[shard] = now;
    return std::nullopt;  // the simulated server answers, its bucket deciding
  });
  // 30 ids in each of the 4 shards: equal shares, so no shard sends alone at the end.
  std::string text;
  std::array<int, 4> per_shard{};
  for (int i = 0; per_shard[0] + per_shard[1] + per_shard[2] + per_shard[3] < 120; ++i) {
    const std::string id = "T" + std::to_string(i);
    const std::size_t shard = clef::shard_of(Json(id).dump(), 4);
    if (per_shard[shard] == 30) continue;
    ++per_shard[shard];
    text +=
        Json({{"id", id}, {"state", {{"ticket", "ticket number " + std::to_string(i)}}}}).dump() +
        "\n";
  }
  const std::string input = write_temp_file("shard_rate_total.jsonl", text);
  std::vector<pid_t> children;
  for (int k = 0; k < 4; ++k) {
    children.push_back(clef::testing::spawn_clef(
        batch_args(server.base_url(), input, fresh_path("rate_total." + std::to_string(k)),
                   {"--shard", std::to_string(k) + "/4", "--rate-total", "40", "-j", "4"})));
  }
  for (pid_t child : children) EXPECT_EQ(clef::testing::wait_for_exit(child), 0);
  std::lock_guard<std::mutex> lock(mutex);
  const int refused = server.request_count() - 120;
  EXPECT_LT(refused, 6) << refused << " of " << server.request_count() << " refused";
  ASSERT_GE(arrivals.size(), 120u);
  std::sort(arrivals.begin(), arrivals.end());
  // The rate while all four send, a quarter of a second in from each end: one process starting
  // late (start-up under a sanitizer, its run record's fsync on a busy disk) is not a slow rate.
  const auto from = *std::max_element(first.begin(), first.end()) + std::chrono::milliseconds(250);
  const auto to = *std::min_element(last.begin(), last.end()) - std::chrono::milliseconds(250);
  ASSERT_LT(from, to);
  const auto in_window =
      std::count_if(arrivals.begin(), arrivals.end(), [&](auto t) { return t >= from && t <= to; });
  const double window = std::chrono::duration<double>(to - from).count();
  const double rate = static_cast<double>(in_window) / window;
  EXPECT_GE(rate, 0.95 * 40) << in_window << " in " << window << " s";
  EXPECT_LE(rate, 1.05 * 40 + 1 / window) << in_window << " in " << window << " s";

  // --rate-total shares a rate among shards: without --shard, or beside --rate, refused.
  EXPECT_EQ(run_clef(batch_args(server.base_url(), input, fresh_path("rate_total_alone"),
                                {"--rate-total", "40"}))
                .code,
            2);
  EXPECT_EQ(run_clef(batch_args(server.base_url(), input, fresh_path("rate_total_and_rate"),
                                {"--shard", "0/4", "--rate-total", "40", "--rate", "5"}))
                .code,
            2);
}

/// The Slurm variables of one array task, as Slurm's _create_job_array() sets them: MIN, MAX
/// and COUNT from the ids submitted, STEP from a ":N" in --array (else 1).
struct SlurmTask {
  int id, min, max, step, count;
};

void set_slurm(const SlurmTask& task) {
  ::setenv("SLURM_ARRAY_TASK_ID", std::to_string(task.id).c_str(), 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", std::to_string(task.min).c_str(), 1);
  ::setenv("SLURM_ARRAY_TASK_MAX", std::to_string(task.max).c_str(), 1);
  ::setenv("SLURM_ARRAY_TASK_STEP", std::to_string(task.step).c_str(), 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", std::to_string(task.count).c_str(), 1);
}

void clear_slurm() {
  for (const char* name : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
                           "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT"})
    ::unsetenv(name);
}

TEST(CliShard, SlurmArraysMapToShardsWholeSteppedAndRerunAsMergeAdvises) {
  FakeServer server;
  const std::string input = write_temp_file("slurm.jsonl", jsonl_tickets(40));
  // --array=0-3 and --array=1-7:2: every task a shard of 4, each once.
  for (const auto& tasks :
       {std::vector<SlurmTask>{{0, 0, 3, 1, 4}, {1, 0, 3, 1, 4}, {2, 0, 3, 1, 4}, {3, 0, 3, 1, 4}},
        std::vector<SlurmTask>{
            {1, 1, 7, 2, 4}, {3, 1, 7, 2, 4}, {5, 1, 7, 2, 4}, {7, 1, 7, 2, 4}}}) {
    std::set<std::string> shards;
    for (const SlurmTask& task : tasks) {
      set_slurm(task);
      shards.insert(recorded_shard(server, input, {"--shard", "auto"}));
      EXPECT_EQ(recorded_shard(server, input, {"--shard", "auto", "--shards", "4"}),
                std::to_string((task.id - task.min) / task.step) + "/4");
    }
    EXPECT_EQ(shards, (std::set<std::string>{"0/4", "1/4", "2/4", "3/4"}));
  }
  // merge's advice for shards 2 and 3 of 4: `sbatch --array=2,3` with --shards 4. Those tasks
  // see MIN 2, MAX 3, COUNT 2 and decide shards 2 and 3 of 4, not 0 and 1 of 2.
  for (const SlurmTask& task : {SlurmTask{2, 2, 3, 1, 2}, SlurmTask{3, 2, 3, 1, 2}}) {
    set_slurm(task);
    EXPECT_EQ(recorded_shard(server, input, {"--shard", "auto", "--shards", "4"}),
              std::to_string(task.id) + "/4");
  }
  // Arrays that are not one whole range need --shards; ids past it are refused, never wrapped.
  set_slurm({3, 1, 7, 1, 4});  // --array=1,3,5,7: STEP is 1 for a list
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto"}, 2).find("not one whole range"),
            std::string::npos);
  set_slurm({7, 7, 7, 1, 1});  // a rerun of a shard that does not exist
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto", "--shards", "4"}, 2)
                .find("shard 7 does not exist"),
            std::string::npos);
  set_slurm({7, 1, 7, 1, 4});  // --array=1,2,3,7 with --shards 4: ids are shards, 7 is none
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto", "--shards", "4"}, 2)
                .find("shard 7 does not exist: shards are numbered 0 to 3"),
            std::string::npos);
  set_slurm({4, 1, 7, 2, 4});  // an id off the step
  EXPECT_NE(recorded_shard(server, input, {"--shard", "auto"}, 2).find("not one whole range"),
            std::string::npos);
  clear_slurm();
}

TEST(CliShard, AShardOutOfRangeNamesTheRange) {
  FakeServer server;
  const std::string input = write_temp_file("shard_range.jsonl", jsonl_tickets(4));
  EXPECT_NE(recorded_shard(server, input, {"--shard", "0/1000000000"}, 2)
                .find("the number of shards must be 1 to 100000, not 1000000000"),
            std::string::npos);
  EXPECT_NE(recorded_shard(server, input, {"--shard", "5/4"}, 2)
                .find("shard 5 does not exist: shards are numbered 0 to 3"),
            std::string::npos);
  // However many digits: the range, not "is not K/N".
  EXPECT_NE(recorded_shard(server, input, {"--shard", "1/99999999999999999999"}, 2)
                .find("the number of shards must be 1 to 100000, not a number over"),
            std::string::npos);
  // An unset variable (--shard "$NOMAD_META_shard") is no shard, not the whole input.
  EXPECT_NE(recorded_shard(server, input, {"--shard", ""}, 2).find("is empty"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 0u);
}

}  // namespace

TEST(CliShard, ABadShardCountOrTotalRateIsNamedAsGiven) {
  FakeServer server;
  const std::string input = write_temp_file("shard_flags.jsonl", jsonl_tickets(2));
  auto negative = run_clef(batch_args(server.base_url(), input, fresh_path("shard_flags_out"),
                                      {"--shard", "auto", "--shards", "-1"}));
  EXPECT_EQ(negative.code, 2);
  EXPECT_NE(negative.err.find("--shards"), std::string::npos) << negative.err;
  EXPECT_EQ(negative.err.find("18446744073709551615"), std::string::npos) << negative.err;
  for (const char* count : {"0", "100001", "2.5", "1e3", "0x10"}) {
    auto outside = run_clef(batch_args(server.base_url(), input, fresh_path("shard_flags_out"),
                                       {"--shard", "auto", "--shards", count}));
    EXPECT_EQ(outside.code, 2);
    EXPECT_NE(
        outside.err.find(std::string("the number of shards must be 1 to 100000, not ") + count),
        std::string::npos)
        << outside.err;
  }
  // Decimal numbers only, for every number flag: CLI11 read -j 0x4 as 4.
  for (const auto& flag : std::vector<std::vector<std::string>>{
           {"-j", "0x4"}, {"--rate", "0x10"}, {"--timeout", "0x5"}, {"--retries", "0X1"}}) {
    auto hex = run_clef(batch_args(server.base_url(), input, fresh_path("shard_flags_out"), flag));
    EXPECT_EQ(hex.code, 2) << flag[0];
    EXPECT_NE(hex.err.find("not a decimal number"), std::string::npos) << hex.err;
  }
  auto rate = run_clef(batch_args(server.base_url(), input, fresh_path("shard_flags_out"),
                                  {"--shard", "0/2", "--rate-total", "fast"}));
  EXPECT_EQ(rate.code, 2);
  EXPECT_NE(rate.err.find("--rate-total must be 0 (no cap) or from 1/86400"), std::string::npos)
      << rate.err;
  EXPECT_EQ(server.requests().size(), 0u);
}
