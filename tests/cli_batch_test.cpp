// clef batch against a real local server with injected faults, in-process and as a process
// that is killed and resumed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

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
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::Scripted;
using clef::testing::wait_until;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;
using namespace std::chrono_literals;

TEST(CliBatch, EveryIdExactlyOnceInOrderUnderLatencyThrottlingAndDrops) {
  FakeServer server;
  server.set_latency(1ms);
  auto faults = std::make_shared<std::atomic<int>>(0);
  server.set_script(clef::testing::first_attempt_faults(4, faults));
  const std::string input = write_temp_file("tickets.jsonl", jsonl_tickets(200));
  const std::string output = fresh_path("out_ordered.jsonl");
  auto r = run_clef(batch_args(server.base_url(), input, output, {"--ordered", "-j", "8"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 200u);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(lines[static_cast<std::size_t>(i)]["id"], "T" + std::to_string(i));
    EXPECT_EQ(lines[static_cast<std::size_t>(i)]["answers"]["urgent"]["status"], "ok");
  }
  EXPECT_EQ(faults->load(), 50);
  EXPECT_NE(r.err.find("clef: batch: 200 written, 200 ok, 0 failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("clef:   urgent:"), std::string::npos);
}

TEST(CliBatch, AnEmptyFlagValueIsRefusedNotTakenAsNotGiven) {
  // `--replay "$CASSETTE"` with the variable unset went to the network; `--record ""` recorded
  // nothing; `--cache ""` ran without a cache; `-o ""` wrote to stdout.
  FakeServer server;
  const std::string input = write_temp_file("empty_flag.jsonl", jsonl_tickets(1));
  for (const char* flag :
       {"--replay", "--record", "--cache", "-o", "--metrics-file", "--host", "--proxy", "-m"}) {
    std::vector<std::string> args = {"batch", input, "--yes-no", "urgent: Is it urgent?"};
    if (std::string(flag) != "--host") args.insert(args.end(), {"--host", server.base_url()});
    if (std::string(flag) != "-o") args.insert(args.end(), {"-o", fresh_path("empty_flag_out")});
    args.insert(args.end(), {flag, ""});
    auto r = run_clef(args);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find(": is empty (a variable that was not set?)"), std::string::npos)
        << flag << ": " << r.err;
  }
  // `--record=$UNSET`: CLI11 would take the next argument (here the input) as the value.
  auto equals = run_clef({"batch", "--record=", input, "--yes-no", "urgent: Is it urgent?",
                          "--host", server.base_url(), "-o", fresh_path("empty_flag_out")});
  EXPECT_EQ(equals.code, 2) << equals.err;
  EXPECT_NE(equals.err.find("--record: is empty"), std::string::npos) << equals.err;
  auto ask = run_clef({"ask", "--yes-no", "urgent: Is it urgent?", "--replay", "", "some text"});
  EXPECT_EQ(ask.code, 2) << ask.err;
  EXPECT_NE(ask.err.find("--replay: is empty"), std::string::npos) << ask.err;
  EXPECT_EQ(server.requests().size(), 0u);
  // Positional arguments are the commands' own to judge: an empty state is refused as one.
  auto state =
      run_clef({"ask", "--yes-no", "urgent: Is it urgent?", "--host", server.base_url(), ""});
  EXPECT_EQ(state.code, 2) << state.err;
  EXPECT_NE(state.err.find("the state is empty"), std::string::npos) << state.err;
}

TEST(CliBatch, ACsvOrTsvCellOfTheServersTextHoldsNoEscapeNorOverride) {
  // A server's refusal message, its model's name: an ESC or a right-to-left override in them
  // reached the table raw, and a terminal obeyed it (a title set, colours changed).
  FakeServer server;
  server.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    return Scripted{200, R"({"model":"clef-flash","answers":{"urgent":{"type":"refusal",)"
                         R"("message":"I won't \u001b]0;PWNED\u0007 \u202e here"}}})"};
  });
  const std::string input = write_temp_file("table_escape.jsonl", jsonl_tickets(2));
  for (const char* format : {"csv", "tsv"}) {
    const std::string output = fresh_path(std::string("table_escape.") + format);
    auto r = run_clef(batch_args(server.base_url(), input, output, {"--output-format", format}));
    EXPECT_EQ(r.code, 6) << r.err;
    const std::string table = read_file(output);
    EXPECT_NE(table.find("I won't ?]0;PWNED? ? here"), std::string::npos) << format << table;
    EXPECT_EQ(table.find('\x1b'), std::string::npos) << format;
    EXPECT_EQ(table.find('\x07'), std::string::npos) << format;
    EXPECT_EQ(table.find("\xe2\x80\xae"), std::string::npos) << format;
  }
}

TEST(CliBatch, AnIntegerWiderThan64BitsKeepsItsDigits) {
  // A parsed line holds such an integer only as a double: in a state it is sent as written, and
  // an id that could not be written back exactly is refused, saying how to keep it.
  FakeServer server;
  const std::string input = write_temp_file(
      "wide_integers.jsonl",
      "{\"id\": \"plain\", \"state\": {\"ticket\": \"refund\"}}\n"
      "{\"id\": \"wide\", \"state\": {\"account\": 123456789012345678901234567890, "
      "\"ticket\": \"refund\"}}\n"
      "{\"id\": 98765432109876543210987, \"state\": {\"ticket\": \"refund\"}}\n"
      "{\"id\": \"escaped\", \"st\\u0061te\": {\"account\": 223456789012345678901234567890, "
      "\"ticket\": \"refund\"}}\n");
  const std::string output = fresh_path("wide_integers_out.jsonl");
  auto run = run_clef(batch_args(server.base_url(), input, output, {"--ordered"}));
  EXPECT_EQ(run.code, 6) << run.err;
  const auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 4u) << read_file(output);
  EXPECT_EQ(lines[3]["answers"]["urgent"]["status"], "ok");
  EXPECT_EQ(lines[0]["answers"]["urgent"]["status"], "ok");
  EXPECT_EQ(lines[1]["answers"]["urgent"]["status"], "ok");
  EXPECT_EQ(lines[2]["error"]["kind"], "invalid_input") << lines[2].dump();
  EXPECT_NE(lines[2]["error"]["message"].get<std::string>().find(
                "98765432109876543210987 is an integer wider than 64 bits"),
            std::string::npos)
      << lines[2].dump();
  bool whole = false;
  for (const auto& request : server.requests())
    whole = whole ||
            request.body.find("\"account\":123456789012345678901234567890,") != std::string::npos;
  EXPECT_TRUE(whole) << "the account number reached the server with every digit";
  // Its key spelled with an escape, a state is still read from the line as the parser reads it.
  bool escaped_whole = false;
  for (const auto& request : server.requests())
    escaped_whole =
        escaped_whole || request.body.find("223456789012345678901234567890,") != std::string::npos;
  EXPECT_TRUE(escaped_whole);
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(CliBatch, ATextLineThatIsNotUtf8IsNamedByItsLine) {
  // Text input: the line is the state. One that is not UTF-8 fails with its line named (CSV
  // says "line 3" too); the others are answered.
  FakeServer server;
  const std::string input =
      write_temp_file("not_utf8.txt", "refund please\ncharged tw\xffice\nwhere is my order\n");
  const std::string output = fresh_path("not_utf8_out.jsonl");
  auto run = run_clef(batch_args(server.base_url(), input, output, {"--ordered"}));
  EXPECT_EQ(run.code, 6) << run.err;
  const auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 3u) << read_file(output);
  EXPECT_EQ(lines[1]["error"]["kind"], "invalid_input") << lines[1].dump();
  EXPECT_EQ(lines[1]["error"]["where"], "line 2") << lines[1].dump();
  EXPECT_EQ(lines[0]["answers"]["urgent"]["status"], "ok");
  EXPECT_EQ(lines[2]["answers"]["urgent"]["status"], "ok");
  EXPECT_EQ(server.request_count(), 2);
}

TEST(CliBatch, UnorderedStillWritesEachIdOnce) {
  FakeServer server;
  const std::string output = fresh_path("out_unordered.jsonl");
  auto r = run_clef(batch_args(server.base_url(), write_temp_file("t2.jsonl", jsonl_tickets(100)),
                               output, {"-j", "16"}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> ids;
  for (const auto& line : lines_of(read_file(output))) ids.insert(line["id"].get<std::string>());
  EXPECT_EQ(ids.size(), 100u);
}

TEST(CliBatch, FailuresAreWrittenAndExitSix) {
  FakeServer server;
  server.set_script([](const auto& request, int) -> std::optional<Scripted> {
    if (request.body.find("number 3\"") != std::string::npos)
      return Scripted{400, R"({"error":"bad state"})"};
    return std::nullopt;
  });
  const std::string input =
      write_temp_file("t3.jsonl", jsonl_tickets(5) + "{not json\n" + R"({"id":"no-state"})" + "\n");
  const std::string output = fresh_path("out_fail.jsonl");
  auto r = run_clef(batch_args(server.base_url(), input, output, {"--ordered"}));
  EXPECT_EQ(r.code, 6) << r.err;
  const auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[3]["error"]["kind"], "request_rejected");
  EXPECT_EQ(lines[3]["error"]["status"], 400);
  EXPECT_EQ(lines[3]["error"]["server_message"], "bad state");
  EXPECT_TRUE(lines[5]["id"].is_null());  // never a made-up id that could equal a real one
  EXPECT_EQ(lines[5]["line"], 6);         // an unreadable line is named by its line number
  EXPECT_EQ(lines[5]["error"]["kind"], "invalid_input");
  EXPECT_EQ(lines[6]["id"], "no-state");
  EXPECT_NE(lines[6]["error"]["message"].get<std::string>().find("\"state\""), std::string::npos);
}

TEST(CliBatch, CsvTsvAndTextInputs) {
  FakeServer server;
  const std::string csv = write_temp_file(
      "t.csv", "ticket_id,body\nA1,\"Refund, please\"\nA2,\"He said \"\"hi\"\"\nthen left\"\n");
  const std::string out1 = fresh_path("csv_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), csv, out1,
                                {"--ordered", "--id-field", "ticket_id", "--state-field", "body"}))
                .code,
            0);
  auto lines = lines_of(read_file(out1));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["id"], "A2");
  std::set<std::string> states;
  for (const auto& request : server.requests())
    states.insert(Json::parse(request.body)["state"].get<std::string>());
  EXPECT_EQ(states, (std::set<std::string>{"Refund, please", "He said \"hi\"\nthen left"}));

  const std::string text = write_temp_file("t.txt", "first ticket\n\nthird ticket\n");
  const std::string out2 = fresh_path("txt_out.jsonl");
  // Ids are line numbers; the blank line gets its own error line (exit 6: one item failed).
  ASSERT_EQ(run_clef(batch_args(server.base_url(), text, out2, {"--ordered"})).code, 6);
  lines = lines_of(read_file(out2));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1]["id"], 2);
  EXPECT_EQ(lines[1]["error"]["message"], "the state is empty (a blank line)");
  EXPECT_EQ(lines[2]["id"], 3);

  const std::string tsv = write_temp_file("t.tsv", "id\tstate\nX\tsome text\n");
  const std::string out3 = fresh_path("tsv_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), tsv, out3)).code, 0);
  EXPECT_EQ(lines_of(read_file(out3)).at(0)["id"], "X");

  auto bad_header = run_clef(
      batch_args(server.base_url(), write_temp_file("h.csv", "a,b\n1,2\n"), fresh_path("h.jsonl")));
  EXPECT_EQ(bad_header.code, 2);
  EXPECT_NE(bad_header.err.find("no \"state\" column"), std::string::npos);
}

TEST(CliBatch, AQuoteInsideAFieldIsTextAndAnOpenQuoteIsNamed) {
  // A quote opens a quoted field only as its first character: an inch mark in a ticket is the
  // ticket's, and every row after it is still a row.
  FakeServer server;
  for (const char* separator : {",", "\t"}) {
    const std::string sep = separator;
    const std::string input =
        write_temp_file(sep == "," ? "inch.csv" : "inch.tsv",
                        "id" + sep + "state\nT1" + sep + "My 27\" monitor flickers\nT2" + sep +
                            "refund please\nT3" + sep + "b,\"wor\"ld\n");
    const std::string out = fresh_path("inch_out.jsonl");
    auto r = run_clef(batch_args(server.base_url(), input, out, {"--ordered"}));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = lines_of(read_file(out));
    ASSERT_EQ(lines.size(), 3u) << read_file(out);
    EXPECT_EQ(lines[2]["id"], "T3");
  }
  std::set<std::string> states;
  for (const auto& request : server.requests())
    states.insert(Json::parse(request.body)["state"].get<std::string>());
  EXPECT_TRUE(states.count("My 27\" monitor flickers")) << "the quote is the text's";
  // A quoted field never closed: its row is an error naming it, not the rest silently taken.
  const std::string open = write_temp_file("open_quote.csv", "id,state\na,\"hello\nb,world\n");
  const std::string out = fresh_path("open_quote_out.jsonl");
  auto r = run_clef(batch_args(server.base_url(), open, out));
  EXPECT_EQ(r.code, 6) << r.err;
  const auto lines = lines_of(read_file(out));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0]["error"]["message"].get<std::string>().find("is not closed"),
            std::string::npos)
      << lines[0];
  // Two columns with the name a flag looks for: which one is meant cannot be told.
  for (const char* header : {"id,id,state\na,b,one\n", "id,state,state\na,one,two\n"}) {
    auto twice = run_clef(batch_args(server.base_url(), write_temp_file("twice.csv", header),
                                     fresh_path("twice_out.jsonl")));
    EXPECT_EQ(twice.code, 2) << header;
    EXPECT_NE(twice.err.find("the header has two"), std::string::npos) << twice.err;
  }
}

TEST(CliBatch, OnlyAMistakeInTheCommandLineIsToldToReadTheSyntax) {
  FakeServer server;
  // A file that is not there, written as a bare name: a mistake about a file, not the syntax.
  auto missing = run_clef({"batch", "no_such_input_here.jsonl", "--yes-no", "u: U?", "--host",
                           server.base_url(), "-o", fresh_path("syntax_out.jsonl")});
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_EQ(missing.err.find("--help"), std::string::npos) << missing.err;
  auto flag =
      run_clef(batch_args(server.base_url(), write_temp_file("syntax.jsonl", jsonl_tickets(1)),
                          fresh_path("syntax_out.jsonl"), {"--shard", "3/2"}));
  EXPECT_EQ(flag.code, 2) << flag.err;
  EXPECT_NE(flag.err.find("run the command with --help for the syntax"), std::string::npos)
      << flag.err;
}

TEST(CliBatch, StdinToStdout) {
  FakeServer server;
  auto r = run_clef(batch_args(server.base_url(), "-", "-", {"--ordered"}), jsonl_tickets(3), true);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 3u);
}

TEST(CliBatch, RefusesToClobberResultsAndDedupes) {
  FakeServer server;
  const std::string output = write_temp_file("existing.jsonl", "{\"id\":\"old\"}\n");
  auto r = run_clef(
      batch_args(server.base_url(), write_temp_file("t4.jsonl", jsonl_tickets(2)), output));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--resume"), std::string::npos);
  EXPECT_EQ(read_file(output), "{\"id\":\"old\"}\n");

  std::string same;
  for (int i = 0; i < 20; ++i) same += Json({{"id", i}, {"state", "same text"}}).dump() + "\n";
  const std::string out2 = fresh_path("dedupe.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), write_temp_file("same.jsonl", same), out2,
                                {"--dedupe"}))
                .code,
            0);
  EXPECT_EQ(lines_of(read_file(out2)).size(), 20u);
  EXPECT_EQ(server.request_count(), 1);
}

TEST(CliBatch, AProvidersBudgetStopsTheRunAtOnce) {
  // AI Gateway's spend limit (429, code 2041) and a 402 are stops, not waits: after the first,
  // nothing new is sent (at most the 3 others then in flight), exit 3 naming the budget, and the
  // items not done are left for --resume.
  const std::vector<std::pair<Scripted, std::string>> budgets = {
      {Scripted{429,
                R"({"success":false,"error":[{"code":2041,"message":"Spend limit exceeded"}]})"},
       "the AI Gateway spend limit is reached"},
      {Scripted{402, R"({"error":{"message":"Insufficient credits","code":402}})"},
       "402 Payment Required"},
  };
  for (const auto& [refusal, named] : budgets) {
    FakeServer server;
    server.set_latency(5ms);
    server.set_script([&refusal = refusal](const auto&, int call) -> std::optional<Scripted> {
      if (call >= 10) return refusal;
      return std::nullopt;
    });
    const std::string output = fresh_path("provider_budget_out.jsonl");
    auto r = run_clef(batch_args(server.base_url(),
                                 write_temp_file("t_budget.jsonl", jsonl_tickets(200)), output,
                                 {"-j", "4"}));
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
    EXPECT_LE(server.request_count(), 14);
    const auto lines = lines_of(read_file(output));
    EXPECT_LE(lines.size(), 13u);
    for (const auto& line : lines) EXPECT_TRUE(line.contains("answers")) << line.dump();
  }
}

// --prices FILE: MODEL=INPUT[,OUTPUT] lines ('#' comments, blank lines) price the models as
// --price does; a --price for the same model wins; a bad line is refused naming the file and line.
TEST(CliBatch, APriceFilePricesModelsAndAPriceFlagWins) {
  FakeServer server;
  const std::string input = write_temp_file("t_pricefile.jsonl", jsonl_tickets(5));
  const std::string prices = write_temp_file(
      "prices.txt", "# dollars per million tokens\n\nclef-flash = 2000\n  other=1,2\n");
  auto cost_of_first = [](const std::string& output) {
    const Json line = lines_of(read_file(output)).at(0);
    return line["cost"]["usd"].get<double>() / line["usage"]["input_tokens"].get<double>() * 1e6;
  };
  const std::string from_file = fresh_path("pricefile.jsonl");
  auto r = run_clef(batch_args(server.base_url(), input, from_file,
                               {"--backend", "systemone", "--prices", prices}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NEAR(cost_of_first(from_file), 2000, 1e-6);
  // An editor's byte order mark is not part of the first model's name.
  const std::string with_bom = write_temp_file("prices_bom.txt",
                                               "\xEF\xBB\xBF"
                                               "clef-flash = 2000\n");
  const std::string from_bom = fresh_path("pricefile_bom.jsonl");
  r = run_clef(batch_args(server.base_url(), input, from_bom,
                          {"--backend", "systemone", "--prices", with_bom}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NEAR(cost_of_first(from_bom), 2000, 1e-6);
  const std::string flag_wins = fresh_path("pricefile_flag.jsonl");
  r = run_clef(
      batch_args(server.base_url(), input, flag_wins,
                 {"--backend", "systemone", "--prices", prices, "--price", "clef-flash=500"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NEAR(cost_of_first(flag_wins), 500, 1e-6);
  const std::string bad = write_temp_file("bad_prices.txt", "clef-flash=1\nclef=cheap\n");
  r = run_clef(batch_args(server.base_url(), input, fresh_path("pricefile_bad.jsonl"),
                          {"--backend", "systemone", "--prices", bad}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("bad_prices.txt: line 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("clef=cheap"), std::string::npos) << r.err;
}

TEST(CliBatch, EachLineCarriesItsCostAndTheSummaryAddsItUp) {
  // A server that measures nothing, for a model clef has no price for: each line's cost is
  // null ("unknown", never 0) and the summary says how to price it; with --price each line's
  // cost is tokens x price and the summary adds them up; a local Ollama's decisions are free,
  // and its summary says nothing of money.
  FakeServer server;
  const std::string input = write_temp_file("t_cost.jsonl", jsonl_tickets(20));
  // clef's table prices Clef-Flash on Workers AI, not on an unnamed System One server.
  const std::vector<std::string> house = {"--backend", "systemone"};
  const std::string unknown_out = fresh_path("cost_unknown.jsonl");
  auto unknown = run_clef(batch_args(server.base_url(), input, unknown_out, house));
  ASSERT_EQ(unknown.code, 0) << unknown.err;
  for (const auto& line : lines_of(read_file(unknown_out))) {
    EXPECT_TRUE(line["cost"]["usd"].is_null()) << line.dump();
    EXPECT_EQ(line["cost"]["source"], "unknown");
  }
  EXPECT_NE(unknown.err.find("cost: unknown for 20 decision(s)"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("--price clef-flash=INPUT[,OUTPUT]"), std::string::npos)
      << unknown.err;

  std::vector<std::string> priced_flags = house;
  priced_flags.insert(priced_flags.end(), {"--price", "clef-flash=2000,0"});
  const std::string priced_out = fresh_path("cost_priced.jsonl");
  auto priced = run_clef(batch_args(server.base_url(), input, priced_out, priced_flags));
  ASSERT_EQ(priced.code, 0) << priced.err;
  double total = 0;
  for (const auto& line : lines_of(read_file(priced_out))) {
    EXPECT_EQ(line["cost"]["source"], "computed") << line.dump();
    const double expected = line["usage"]["input_tokens"].get<double>() * 2000 / 1e6;
    EXPECT_NEAR(line["cost"]["usd"].get<double>(), expected, 1e-12) << line.dump();
    total += expected;
  }
  char sum[32];
  std::snprintf(sum, sizeof sum, "cost: $%.4f in all", total);
  EXPECT_NE(priced.err.find(sum), std::string::npos) << sum << "\n" << priced.err;
  EXPECT_NE(priced.err.find("20 computed from tokens x price"), std::string::npos) << priced.err;

  const std::string local_out = fresh_path("cost_local.jsonl");
  auto local = run_clef(batch_args(server.base_url(), input, local_out));
  ASSERT_EQ(local.code, 0) << local.err;
  EXPECT_EQ(local.err.find("cost:"), std::string::npos) << local.err;
  EXPECT_EQ(lines_of(read_file(local_out)).at(0)["cost"]["usd"], 0.0);

  for (const char* bad : {"house", "=1", "house=", "house=-1", "house=1,x", "house=1e9"}) {
    auto refused = run_clef(
        batch_args(server.base_url(), input, fresh_path("cost_bad.jsonl"), {"--price", bad}));
    EXPECT_EQ(refused.code, 2) << bad << ": " << refused.err;
    EXPECT_NE(refused.err.find("--price"), std::string::npos) << refused.err;
  }
}

/// A server that bills each answer (usage.cost, as OpenRouter-style servers say it: $0.01 each
/// unless `cents` says otherwise for the call) and counts what it billed, in cents; with
/// `no_cost` it says nothing of money.
struct BillingServer {
  FakeServer server;
  std::atomic<int> billed{0};  ///< In cents.
  std::atomic<int> answered{0};
  explicit BillingServer(
      std::function<int(int call)> cents = [](int) { return 1; }, bool no_cost = false) {
    server.set_script([this, cents, no_cost](const auto& request, int) -> std::optional<Scripted> {
      const auto state = Json::parse(request.body)["state"].dump();
      const int charged = no_cost ? 0 : cents(answered++);
      billed += charged;
      const std::string cost = no_cost ? "" : ",\"cost\":" + std::to_string(charged / 100.0);
      return Scripted{200,
                      R"({"model":"clef-flash","answers":{"urgent":{"type":"noul","noul":0.9}},)"
                      R"("usage":{"input_tokens":10000,"output_tokens":0)" +
                          cost + R"(},"echo":)" + state + "}",
                      "application/json",
                      {},
                      std::chrono::milliseconds(5)};
    });
  }
  std::vector<std::string> args(const std::string& input, const std::string& output,
                                std::vector<std::string> extra) const {
    std::vector<std::string> flags = {"--backend", "systemone"};
    if (std::find(extra.begin(), extra.end(), "-j") == extra.end())
      flags.insert(flags.end(), {"-j", "16"});
    flags.insert(flags.end(), extra.begin(), extra.end());
    return batch_args(server.base_url(), input, output, flags);
  }
};

/// `clef batch INPUT` against a Workers AI mock (it measures each decision in cf-ai-neurons,
/// from the request's tokens), with the README's two questions and `extra`.
std::vector<std::string> workers_batch(const FakeServer& server, const std::string& input,
                                       std::vector<std::string> extra) {
  std::vector<std::string> args = {"batch",
                                   input,
                                   "--backend",
                                   "workers-ai",
                                   "--host",
                                   server.base_url() + "/client/v4",
                                   "--account-id",
                                   "acc9",
                                   "--api-token-file",
                                   write_temp_file("etok", "test-token\n"),
                                   "--choice",
                                   "team: Team? | billing=Payments | technical=Bugs",
                                   "--yes-no",
                                   "refund: Asks for a refund?"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// --estimate decides a seeded sample (20 by default) and nothing else, says the estimate on
// stdout as JSON, and the full run then costs within 20 % of it (examples/tickets.jsonl on the
// mock); the same command estimates the same; a warm cache does not make it $0.
TEST(CliBatch, EstimateSaysWhatTheRunWillCostBeforeSpendingIt) {
  FakeServer server(clef::MockProfile::workers_ai);
  const std::string tickets = std::string(CLEF_TEST_DATA) + "/../../examples/tickets.jsonl";
  auto estimate = run_clef(workers_batch(server, tickets, {"--estimate"}));
  ASSERT_EQ(estimate.code, 0) << estimate.err;
  EXPECT_EQ(server.request_count(), 20) << "the sample, and nothing else";
  const Json said = Json::parse(estimate.out);
  EXPECT_EQ(said["items"], 66);
  EXPECT_EQ(said["sampled"], 20);
  const double guess = said["estimate_usd"].get<double>();
  EXPECT_LE(said["low_usd"].get<double>(), guess);
  EXPECT_GE(said["high_usd"].get<double>(), guess);
  EXPECT_NE(estimate.err.find("clef: estimate: $"), std::string::npos) << estimate.err;

  const std::string output = fresh_path("estimated_run.jsonl");
  auto run = run_clef(workers_batch(server, tickets, {"-o", output}));
  ASSERT_EQ(run.code, 0) << run.err;
  double spent = 0;
  for (const auto& line : lines_of(read_file(output))) spent += line["cost"]["usd"].get<double>();
  EXPECT_GT(spent, 0);
  EXPECT_LT(std::abs(guess - spent) / spent, 0.2) << guess << " estimated, " << spent << " spent";

  auto again = run_clef(workers_batch(server, tickets, {"--estimate"}));
  EXPECT_EQ(Json::parse(again.out)["estimate_usd"].get<double>(), guess);

  // Answers from the cache cost nothing now; the estimate prices them by their tokens.
  const std::string cache = fresh_path("estimate_cache");
  auto cold = run_clef(workers_batch(server, tickets, {"--estimate", "--cache", cache}));
  const int before = server.request_count();
  auto warm = run_clef(workers_batch(server, tickets, {"--estimate", "--cache", cache}));
  ASSERT_EQ(warm.code, 0) << warm.err;
  EXPECT_EQ(server.request_count(), before) << "the sample came from the cache";
  EXPECT_GT(Json::parse(warm.out)["estimate_usd"].get<double>(), 0);
}

// A server that measures no cost, for a model clef has no price for: no estimate (exit 2, naming
// the --price it needs), never $0; with --price, tokens x price.
TEST(CliBatch, EstimateWithNoKnownCostNamesThePriceItNeeds) {
  FakeServer server;
  const std::string input = write_temp_file("t_est.jsonl", jsonl_tickets(30));
  auto none = run_clef(batch_args(server.base_url(), input, "-",
                                  {"--backend", "systemone", "--estimate", "--sample", "5"}));
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_NE(none.err.find("--price clef-flash="), std::string::npos) << none.err;
  EXPECT_TRUE(none.out.empty()) << none.out;
  auto priced = run_clef(batch_args(
      server.base_url(), input, "-",
      {"--backend", "systemone", "--estimate", "--sample", "5", "--price", "clef-flash=1000"}));
  ASSERT_EQ(priced.code, 0) << priced.err;
  EXPECT_EQ(Json::parse(priced.out)["sampled"], 5);
  EXPECT_GT(Json::parse(priced.out)["estimate_usd"].get<double>(), 0);
  EXPECT_EQ(server.request_count(), 10);
}

// The Workers AI mock with a spend limit (clef mock --spend-limit): once the neurons it measured
// pass the limit it answers AI Gateway's 2041, and the run stops at once (exit 3, naming it), with
// what was answered written and costing no less than the limit, and nothing sent after the first
// refusal but what was then in flight; --resume after the budget is raised finishes the rest.
TEST(CliBatch, TheMocksSpendLimitStopsTheRunAsAGatewaysWould) {
  FakeServer server(clef::MockProfile::workers_ai);
  clef::MockFaults faults;
  faults.spend_limit_usd = 0.0001;
  server.set_faults(faults);
  server.set_latency(2ms);
  const std::string tickets = write_temp_file("t_spend.jsonl", jsonl_tickets(400));
  const std::string output = fresh_path("spend.jsonl");
  auto r = run_clef(workers_batch(server, tickets, {"-o", output, "-j", "8"}));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("the AI Gateway spend limit is reached"), std::string::npos) << r.err;
  double spent = 0;
  const auto lines = lines_of(read_file(output));
  for (const auto& line : lines) spent += line["cost"]["usd"].get<double>();
  EXPECT_GE(spent, 0.0001);
  EXPECT_LT(lines.size(), 400u);
  // Answered lines, then one refusal per request in flight at most (8), nothing after.
  EXPECT_LE(server.request_count(), static_cast<int>(lines.size()) + 8);
  faults.spend_limit_usd.reset();
  server.set_faults(faults);
  auto resumed = run_clef(workers_batch(server, tickets, {"-o", output, "-j", "8", "--resume"}));
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(clef::testing::lines_by_id(output).size(), 400u);
}

// The sample is paid for too: --max-cost caps it (from the hostile pass: 20 requests at $0.01
// under a $0.05 cap); --sample means nothing without --estimate and is refused.
TEST(CliBatch, EstimateKeepsToTheCapAndSampleNeedsEstimate) {
  BillingServer billing;
  const std::string input = write_temp_file("t_est_cap.jsonl", jsonl_tickets(100));
  auto capped = run_clef(billing.args(input, "-", {"--estimate", "--max-cost", "0.05"}));
  EXPECT_LE(billing.billed.load(), 5) << capped.err;
  auto stray = run_clef(billing.args(input, fresh_path("stray.jsonl"), {"--sample", "5"}));
  EXPECT_EQ(stray.code, 2) << stray.err;
  EXPECT_NE(stray.err.find("give --estimate too"), std::string::npos) << stray.err;
  // A warm cache prices its answers as the server billed them when sent (usage.cost here; the
  // model has no price in clef's table): the same estimate, nothing sent.
  BillingServer cached;
  const std::string cache = fresh_path("est_cache_dir");
  auto cold = run_clef(cached.args(input, "-", {"--estimate", "--sample", "5", "--cache", cache}));
  ASSERT_EQ(cold.code, 0) << cold.err;
  const int billed = cached.billed.load();
  auto warm = run_clef(cached.args(input, "-", {"--estimate", "--sample", "5", "--cache", cache}));
  ASSERT_EQ(warm.code, 0) << warm.err;
  EXPECT_EQ(cached.billed.load(), billed) << "the sample came from the cache";
  EXPECT_EQ(Json::parse(warm.out)["estimate_usd"], Json::parse(cold.out)["estimate_usd"]);
}

TEST(CliBatch, MaxCostNeverLetsTheSpendPassTheCapAndResumeGoesOnFromIt) {
  // 200 tickets at $0.01, 16 in flight, a cap of $0.50: what the server billed never passes
  // it, exit 3 names the cap; --resume under the same cap sends nothing more; under a cap of
  // $1.20 it goes on counting the first run's spend, and stops within it again.
  BillingServer billing;
  const std::string input = write_temp_file("t_cap.jsonl", jsonl_tickets(200));
  const std::string output = fresh_path("cap.jsonl");
  auto first = run_clef(billing.args(input, output, {"--max-cost", "0.5"}));
  EXPECT_EQ(first.code, 3) << first.err;
  EXPECT_NE(first.err.find("the cost cap of $0.5 is reached"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("--resume"), std::string::npos) << first.err;
  EXPECT_LE(billing.billed.load(), 50);
  EXPECT_GE(billing.billed.load(), 40) << "the cap stopped the run long before it was reached";
  EXPECT_EQ(lines_of(read_file(output)).size(), static_cast<std::size_t>(billing.billed.load()));

  const int after_first = billing.billed.load();
  auto again = run_clef(billing.args(input, output, {"--max-cost", "0.5", "--resume"}));
  EXPECT_EQ(again.code, 3) << again.err;
  EXPECT_EQ(billing.billed.load(), after_first) << "sent more under a cap already reached";

  auto more = run_clef(billing.args(input, output, {"--max-cost", "1.2", "--resume"}));
  EXPECT_EQ(more.code, 3) << more.err;
  EXPECT_LE(billing.billed.load(), 120);
  EXPECT_GT(billing.billed.load(), after_first);
  std::set<std::string> ids;
  for (const auto& line : lines_of(read_file(output))) ids.insert(line["id"].dump());
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(billing.billed.load())) << "an id twice";

  // A table, or stdout, cannot be gone on from with --resume: the advice does not say it.
  BillingServer table;
  auto csv = run_clef(
      table.args(input, fresh_path("cap.csv"), {"--max-cost", "0.05", "--output-format", "csv"}));
  EXPECT_EQ(csv.code, 3) << csv.err;
  EXPECT_EQ(csv.err.find("--resume to"), std::string::npos) << csv.err;
  EXPECT_NE(csv.err.find("run again whole"), std::string::npos) << csv.err;
  // --estimate under a cap too small for its sample: the cap said, exit 3 (no signal came).
  auto estimate = run_clef(
      table.args(input, fresh_path("cap_estimate.jsonl"), {"--max-cost", "0", "--estimate"}));
  EXPECT_EQ(estimate.code, 3) << estimate.err;
  EXPECT_NE(estimate.err.find("stopped the sample before any cost was known"), std::string::npos)
      << estimate.err;

  // Four shards under one cap of $0.20 spend at most $0.05 each, $0.20 together.
  BillingServer sharded;
  int before = 0;
  for (int k = 0; k < 4; ++k) {
    auto shard = run_clef(sharded.args(input, fresh_path("cap_shard" + std::to_string(k)),
                                       {"--max-cost", "0.2", "--shard", std::to_string(k) + "/4"}));
    EXPECT_EQ(shard.code, 3) << shard.err;
    EXPECT_NE(shard.err.find("this shard's share of --max-cost"), std::string::npos) << shard.err;
    EXPECT_LE(sharded.billed.load() - before, 5) << "shard " << k;
    before = sharded.billed.load();
  }
  EXPECT_LE(sharded.billed.load(), 20);
}

// clef merge adds up what the shards' lines cost: the sum the server billed them.
TEST(CliBatch, MergeSaysWhatTheShardsCostAsTheServerBilledThem) {
  BillingServer billing;
  const std::string input = write_temp_file("t_merge_cost.jsonl", jsonl_tickets(60));
  std::vector<std::string> merge = {"merge"};
  for (int k = 0; k < 3; ++k) {
    const std::string out = fresh_path("merge_cost" + std::to_string(k) + ".jsonl");
    auto shard = run_clef(billing.args(input, out, {"--shard", std::to_string(k) + "/3"}));
    ASSERT_EQ(shard.code, 0) << shard.err;
    merge.push_back(out);
  }
  merge.insert(merge.end(), {"-o", fresh_path("merged_cost.jsonl")});
  auto merged = run_clef(merge);
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(billing.billed.load(), 60);
  EXPECT_NE(merged.err.find("they cost $0.6 in all"), std::string::npos) << merged.err;
}

TEST(CliBatch, MaxCostIsNotFooledByAFreeFirstAnswerOrAWarmCache) {
  // The first answer costs nothing and the rest $0.05, 200 in flight allowed, a cap of $0.10:
  // one free answer is thin evidence (slow start), so the bill stays within the cap.
  const std::string input = write_temp_file("t_free_first.jsonl", jsonl_tickets(200));
  BillingServer free_first([](int call) { return call == 0 ? 0 : 5; });
  auto r = run_clef(
      free_first.args(input, fresh_path("free_first.jsonl"), {"-j", "200", "--max-cost", "0.1"}));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_LE(free_first.billed.load(), 10) << r.err;

  // Five answers in the cache, then 200 at $0.05 with the cache: a cache hit's $0 is no price.
  BillingServer warm([](int) { return 5; });
  const std::string cache = fresh_path("cap_cache");
  ASSERT_EQ(run_clef(warm.args(write_temp_file("t_warm5.jsonl", jsonl_tickets(5)),
                               fresh_path("warm5.jsonl"), {"--cache", cache}))
                .code,
            0);
  warm.billed = 0;
  auto cached = run_clef(warm.args(input, fresh_path("warm.jsonl"),
                                   {"-j", "200", "--cache", cache, "--max-cost", "0.1"}));
  EXPECT_EQ(cached.code, 3) << cached.err;
  EXPECT_LE(warm.billed.load(), 10) << cached.err;
}

TEST(CliBatch, MaxCostPricesTheKeptLinesOrRefusesToResume) {
  // A first run without a cap, against a server that says nothing of money: its lines' cost is
  // unknown. --resume under a cap refuses at once (nothing sent) unless --price prices them.
  BillingServer silent([](int) { return 0; }, true);
  const std::string input = write_temp_file("t_kept.jsonl", jsonl_tickets(20));
  const std::string output = fresh_path("kept.jsonl");
  ASSERT_EQ(
      run_clef(silent.args(write_temp_file("t_kept3.jsonl", jsonl_tickets(3)), output, {})).code,
      0);
  const int sent = silent.server.request_count();
  auto refused =
      run_clef(silent.args(input, output, {"--resume", "--force-resume", "--max-cost", "1"}));
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_NE(refused.err.find("3 line(s) --resume keeps have no known cost"), std::string::npos)
      << refused.err;
  EXPECT_EQ(silent.server.request_count(), sent) << "sent a request it could not price";
  // Priced at $1 per million input tokens, each line (10,000 tokens) cost $0.01: a cap of $0.05
  // leaves room for two more, priced the same way.
  auto priced = run_clef(
      silent.args(input, output,
                  {"--resume", "--force-resume", "--max-cost", "0.05", "--price", "clef-flash=1"}));
  EXPECT_EQ(priced.code, 3) << priced.err;
  EXPECT_EQ(silent.server.request_count(), sent + 2) << priced.err;
}

TEST(CliBatch, MaxCostTakesOnlyAPlainAmountOfDollars) {
  FakeServer server;
  const std::string input = write_temp_file("t_cap_flag.jsonl", jsonl_tickets(2));
  for (const char* bad : {"nan", "inf", "-1", "0x10", " 1", "", "1e-400", "1e10", "ten"}) {
    auto r = run_clef(
        batch_args(server.base_url(), input, fresh_path("cap_flag.jsonl"), {"--max-cost", bad}));
    EXPECT_EQ(r.code, 2) << "--max-cost '" << bad << "': " << r.err;
  }
  EXPECT_EQ(server.request_count(), 0);
}

TEST(CliBatch, MaxCostWithACostNoOneKnowsStopsAndSaysWhatPriceIsMissing) {
  FakeServer server;  // answers with tokens but no cost, for a model clef has no price for
  auto r = run_clef(batch_args(
      server.base_url(), write_temp_file("t_nocost.jsonl", jsonl_tickets(50)),
      fresh_path("nocost.jsonl"), {"--backend", "systemone", "-j", "8", "--max-cost", "1"}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--max-cost cannot hold"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--price clef-flash="), std::string::npos) << r.err;
  EXPECT_EQ(server.request_count(), 1) << "one request at a time until a cost is known";
}

TEST(CliBatch, UnreachableServerStopsEarlyWithExitFive) {
  const std::string output = fresh_path("down.jsonl");
  auto r = run_clef({"batch", write_temp_file("t5.jsonl", jsonl_tickets(500)), "-o", output,
                     "--yes-no", "u: U?", "--retries", "0", "--host",
                     "127.0.0.1:" + std::to_string(clef::testing::refusing_port())});
  EXPECT_EQ(r.code, 5) << r.err;
  // The sink stops the engine itself after 2 x concurrency (4) unreachable results: at most the
  // 4 items then in flight are written after it, however loaded the machine.
  EXPECT_LE(lines_of(read_file(output)).size(), 12u);
}

pid_t spawn_batch(const std::vector<std::string>& args) {
  return clef::testing::spawn_clef(args);
}

int wait_exit(pid_t child) {
  return clef::testing::wait_for_exit(child);
}

void expect_each_id_once(const std::string& output, int n) {
  std::map<std::string, int> count;
  for (const auto& line : lines_of(read_file(output))) {
    EXPECT_FALSE(line.contains("error")) << line.dump();
    ++count[line["id"].get<std::string>()];
  }
  EXPECT_EQ(count.size(), static_cast<std::size_t>(n));
  for (const auto& [id, times] : count) EXPECT_EQ(times, 1) << id;
}

TEST(CliBatchProcess, KilledMidwayThenResumedLosesAndDuplicatesNothing) {
  FakeServer server;
  server.set_latency(5ms);
  HeldAnswers held(server, 60);  // the kill finds the run under way, however slow the machine
  const int n = 300;
  const std::string input = write_temp_file("kill.jsonl", jsonl_tickets(n));
  const std::string output = fresh_path("kill_out.jsonl");
  const auto args = batch_args(server.base_url(), input, output, {"-j", "4"});
  const pid_t child = spawn_batch(args);
  if (!wait_until([&] { return held.waiting() > 0; }, "60 requests from clef batch")) {
    kill(child, SIGKILL);
    wait_exit(child);
    return;
  }
  kill(child, SIGKILL);  // no chance to clean up
  EXPECT_EQ(wait_exit(child), 128 + SIGKILL);
  held.release();
  const std::size_t before = lines_of(read_file(output)).size();
  EXPECT_GT(before, 0u);
  EXPECT_LT(before, static_cast<std::size_t>(n));

  auto resumed = args;
  resumed.push_back("--resume");
  EXPECT_EQ(wait_exit(spawn_batch(resumed)), 0);
  expect_each_id_once(output, n);
}

TEST(CliBatchProcess, SigtermFinishesInFlightLeavesAValidFileAndResumes) {
  FakeServer server;
  server.set_latency(20ms);
  HeldAnswers held(server, 20);  // released once the run has said it was interrupted
  const int n = 200;
  const std::string input = write_temp_file("term.jsonl", jsonl_tickets(n));
  const std::string output = fresh_path("term_out.jsonl");
  const std::string err = fresh_path("term.err");
  const auto args = batch_args(server.base_url(), input, output, {"-j", "4", "--ordered"});
  const pid_t child = clef::testing::spawn_clef(args, "", err);
  if (!wait_until([&] { return held.waiting() > 0; }, "20 requests from clef batch")) {
    kill(child, SIGKILL);
    wait_exit(child);
    return;
  }
  kill(child, SIGTERM);
  EXPECT_TRUE(wait_until([&] { return read_file(err).find("interrupted") != std::string::npos; },
                         "clef batch saying it was interrupted"));
  held.release();  // the requests in flight finish and are written
  EXPECT_EQ(wait_exit(child), 130);
  const std::string text = read_file(output);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const auto lines = lines_of(text);  // every line parses: no half line
  EXPECT_GE(lines.size(), 20u) << "the items answered before the signal, and those in flight";
  EXPECT_LT(lines.size(), static_cast<std::size_t>(n));

  auto resumed = args;
  resumed.push_back("--resume");
  EXPECT_EQ(wait_exit(spawn_batch(resumed)), 0);
  expect_each_id_once(output, n);
}

TEST(CliBatchProcess, ResumeRetriesFailedIdsAndDropsATornLine) {
  FakeServer server;
  server.set_script([](const auto& request, int call) -> std::optional<Scripted> {
    if (call < 3 && request.body.find("number 1\"") != std::string::npos)
      return Scripted{400, R"({"error":"bad state"})"};
    return std::nullopt;
  });
  const std::string input = write_temp_file("torn.jsonl", jsonl_tickets(3));
  const std::string output = fresh_path("torn_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), input, output, {"--ordered"})).code, 6);
  // Tear the last line (T2) as a killed run would leave it.
  std::string text = read_file(output);
  text.resize(text.rfind("\n", text.size() - 2) + 12);
  { std::ofstream(output, std::ios::binary | std::ios::trunc) << text; }
  const int before = server.request_count();
  auto r = run_clef(batch_args(server.base_url(), input, output, {"--resume", "--ordered"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(server.request_count() - before, 2);  // T1 (failed before) and T2 (torn)
  std::map<std::string, int> count;
  for (const auto& line : lines_of(read_file(output))) {
    ++count[line["id"].get<std::string>()];
    EXPECT_FALSE(line.contains("error"));
  }
  EXPECT_EQ(count, (std::map<std::string, int>{{"T0", 1}, {"T1", 1}, {"T2", 1}}));
}

// --resume keeps a line only when it answers every question of the run, each with its type and
// a winner: a hand-edited or damaged line that lost one was kept, and its answer never came.
TEST(CliBatchProcess, ResumeRedoesALineThatLacksAnAnswerTheRunAsks) {
  FakeServer server;
  const std::string input = write_temp_file("lacking.jsonl", jsonl_tickets(5));
  const std::string output = fresh_path("lacking_out.jsonl");
  const std::vector<std::string> extra = {"--ordered", "--choice", "team: Which team? | a=A | b=B"};
  ASSERT_EQ(run_clef(batch_args(server.base_url(), input, output, extra)).code, 0);
  std::string edited;
  for (auto line : lines_of(read_file(output))) {
    const std::string id = line["id"];
    if (id == "T1") line["answers"].erase("team");              // an answer gone
    if (id == "T2") line["answers"]["team"]["type"] = "score";  // another type
    if (id == "T3") line["answers"]["team"].erase("winner");    // no winner
    edited += line.dump() + "\n";
  }
  { std::ofstream(output, std::ios::binary | std::ios::trunc) << edited; }
  const int before = server.request_count();
  auto resumed = extra;
  resumed.push_back("--resume");
  auto r = run_clef(batch_args(server.base_url(), input, output, resumed));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(server.request_count() - before, 3) << "T1, T2 and T3 are asked again";
  std::map<std::string, int> count;
  for (const auto& line : lines_of(read_file(output))) {
    ++count[line["id"].get<std::string>()];
    EXPECT_EQ(line["answers"]["team"]["type"], "choice") << line.dump();
    EXPECT_TRUE(line["answers"]["team"].contains("winner")) << line.dump();
    EXPECT_TRUE(line["answers"].contains("urgent")) << line.dump();
  }
  EXPECT_EQ(count,
            (std::map<std::string, int>{{"T0", 1}, {"T1", 1}, {"T2", 1}, {"T3", 1}, {"T4", 1}}));
}

// A --resume killed in the middle of its rewrite leaves its temporary copy of OUT beside it; the
// next run on OUT removes it (it stayed for ever), and never a file a live writer holds.
TEST(CliBatchProcess, WhatAKilledRewriteLeftBesideTheOutputIsRemovedByTheNextRun) {
  FakeServer server;
  const std::string input = write_temp_file("abandoned.jsonl", jsonl_tickets(3));
  const std::string output = fresh_path("abandoned_out.jsonl");
  ASSERT_EQ(run_clef(batch_args(server.base_url(), input, output)).code, 0);
  const std::string abandoned = output + ".clef-partial.Ab12Cd";
  const std::string held = output + ".clef-partial.Zz99Yy";
  // Not clef's: another name (a user's backup, of the old six-letter pattern too), or clef's
  // name with a mode mkstemp never gives.
  const std::string other = output + ".clef-notes", backup = output + ".clef-backup";
  const std::string readable = output + ".clef-partial.Qq11Rr";
  for (const std::string& path : {abandoned, held, other, backup, readable}) {
    std::ofstream(path) << "{}\n";
    ::chmod(path.c_str(), path == readable ? 0644 : 0600);
  }
  const int holder = ::open(held.c_str(), O_RDONLY);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);  // as a live writer holds its own
  auto r = run_clef(batch_args(server.base_url(), input, output, {"--resume"}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(std::ifstream(abandoned).good()) << "the abandoned copy is still there";
  EXPECT_TRUE(std::ifstream(held).good()) << "a live writer's file was removed";
  for (const std::string& path : {other, backup, readable})
    EXPECT_TRUE(std::ifstream(path).good()) << "a file that is not clef's was removed: " << path;
  EXPECT_TRUE(std::ifstream(output + ".clef-run.json").good());
  EXPECT_EQ(lines_of(read_file(output)).size(), 3u);
  ::close(holder);
  for (const std::string& path : {held, other, backup, readable}) std::remove(path.c_str());
}

}  // namespace

// --image-field holds a path or an array of paths: a number or an object was taken as a path
// ("5", "{\"a\":1}" beside the input); now that item's error, naming the field and what it held.
TEST(CliBatch, AnImageFieldThatIsNeitherAPathNorAListIsThatItemsError) {
  FakeServer server;
  const std::string input = clef::testing::write_temp_file(
      "image_field_types.jsonl", R"({"id":"n","state":{"p":"x"},"image":5})"
                                 "\n"
                                 R"({"id":"o","state":{"p":"x"},"image":{"a":1}})"
                                 "\n"
                                 R"({"id":"z","state":{"p":"x"},"image":null})"
                                 "\n");
  const std::string output = fresh_path("image_field_types_out.jsonl");
  auto r = run_clef(batch_args(server.base_url(), input, output, {"--image-field", "image"}));
  EXPECT_EQ(r.code, 6) << r.err;  // two items failed, each in its line
  const auto lines = lines_of(read_file(output));
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& line : lines) {
    const std::string id = line["id"];
    if (id == "z") {
      EXPECT_FALSE(line.contains("error")) << line.dump();
      continue;
    }
    EXPECT_EQ(line["error"]["message"], std::string("the \"image\" field (--image-field) is a path "
                                                    "or an array of paths, not ") +
                                            (id == "n" ? "number" : "object"))
        << line.dump();
  }
  EXPECT_EQ(server.request_count(), 1);
}
