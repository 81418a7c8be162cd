// Flags that may be repeated take one value each time: the argument after one is the command's
// own (the state, the input, the data), never a second value of the flag.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "fake_server.hpp"
#include "run.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::jsonl_tickets;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::write_temp_file;

TEST(CliArguments, NoRepeatableFlagTakesTheArgumentAfterItsValue) {
  // Every command's, and clef mock's: the class, not the flags the bug was first seen on.
  EXPECT_EQ(clef::cli::options_that_swallow_arguments(), std::vector<std::string>{});
}

TEST(CliArguments, TheArgumentAfterARepeatableFlagIsTheCommandsOwn) {
  FakeServer server;
  // clef ask --host URL "text": the text is the state.
  auto ask = run_clef({"ask", "--yes-no", "u: U?", "--host", server.base_url(), "my printer"});
  EXPECT_EQ(ask.code, 0) << ask.err;
  // clef batch --host URL INPUT, --aig-metadata and --state-columns before INPUT.
  const std::string tickets = write_temp_file("arguments.jsonl", jsonl_tickets(3));
  const std::string out = fresh_path("arguments_out.jsonl");
  auto batch =
      run_clef({"batch", "-o", out, "--yes-no", "u: U?", "--host", server.base_url(), tickets});
  EXPECT_EQ(batch.code, 0) << batch.err;
  EXPECT_EQ(lines_of(read_file(out)).size(), 3u);
  const std::string csv = write_temp_file("arguments.csv", "id,a,b\n1,x,y\n2,z,w\n");
  const std::string csv_out = fresh_path("arguments_csv_out.jsonl");
  auto columns = run_clef({"batch", "-o", csv_out, "--yes-no", "u: U?", "--host", server.base_url(),
                           "--state-columns", "a", csv});
  EXPECT_EQ(columns.code, 0) << columns.err;
  // Through a gateway no one serves: the items fail, but INPUT was read as the input.
  const std::string meta_out = fresh_path("arguments_meta.jsonl");
  auto metadata = run_clef({"batch",
                            "--backend",
                            "workers-ai",
                            "--account-id",
                            "abc",
                            "--gateway",
                            "abc/gw",
                            "--api-token-file",
                            write_temp_file("arguments_token", "t0ken\n"),
                            "--retries",
                            "0",
                            "--host",
                            "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port()),
                            "--aig-metadata",
                            "team=x",
                            tickets,
                            "-o",
                            meta_out,
                            "--yes-no",
                            "u: U?"});
  EXPECT_NE(metadata.code, 2) << metadata.err;
  EXPECT_EQ(lines_of(read_file(meta_out)).size(), 3u) << metadata.err;
  // clef eval: -m, --label, --require, --tolerance before DATA.
  const std::string data = write_temp_file("arguments_data.jsonl",
                                           "{\"id\":\"a\",\"state\":\"x\",\"gold\":\"yes\"}\n"
                                           "{\"id\":\"b\",\"state\":\"y\",\"gold\":\"no\"}\n");
  auto eval = run_clef({"eval", "--yes-no", "u: U?", "--host", server.base_url(), "-m",
                        "clef-flash", "--label", "u=gold", "--require", "u.coverage >= 0", data});
  EXPECT_EQ(eval.code, 0) << eval.err;
}

TEST(CliArguments, ARateTheClockCannotHonourIsRefusedNotTakenForNoCap) {
  FakeServer server;
  const std::string tickets = write_temp_file("rate_args.jsonl", jsonl_tickets(2));
  for (const char* rate :
       {"1e-400", "0.5e-399", "1e-10", "-1", "nan", "inf", " 1", "1 ", "2e6", ""}) {
    auto run = run_clef({"batch", tickets, "-o", fresh_path("rate_args_out.jsonl"), "--yes-no",
                         "u: U?", "--host", server.base_url(), "--rate", rate});
    EXPECT_EQ(run.code, 2) << "--rate '" << rate << "': " << run.err;
  }
  EXPECT_EQ(server.request_count(), 0);
  for (const char* rate : {"0", "0.0", "1", "0.5", "1e6"}) {
    auto run = run_clef({"batch", tickets, "-o", fresh_path("rate_args_ok.jsonl"), "--yes-no",
                         "u: U?", "--host", server.base_url(), "--rate", rate});
    EXPECT_EQ(run.code, 0) << "--rate '" << rate << "': " << run.err;
  }
}

}  // namespace
