// What a newcomer types: each command of issue 8's CLI list, run against a real local server.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::run_clef_on_terminal;
using clef::testing::Scripted;
using clef::testing::ServerShape;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;

const std::string urgency = "urgency: How urgent? | Routine | Soon | Urgent";
const std::string team = "team: Which team? | billing=Money | technical=Bugs";

/// A server whose urgency answer is level 2 ("Urgent", 0.7), its keys in no particular order.
void answer_urgent(FakeServer& server) {
  server.set_script([](const auto&, int) {
    return Scripted{200,
                    R"({"model":"clef-flash","answers":{"urgency":{"type":"score","score":1.6,)"
                    R"("probabilities":{"2":0.7,"0":0.1,"1":0.2}},)"
                    R"("team":{"type":"choice","choice":"billing",)"
                    R"("probabilities":{"billing":0.8,"technical":0.2}}}})",
                    "application/json",
                    {},
                    std::chrono::milliseconds(0)};
  });
}

std::vector<std::string> ask(const FakeServer& server, std::vector<std::string> extra) {
  std::vector<std::string> args = {"ask", "--host", server.base_url(), "--retries", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliNewcomer, SingleValueOptionsLeaveThePositionalStateAlone) {
  FakeServer server;
  auto expect = run_clef(ask(server, {"--choice", team, "--expect", "team=billing", "my text"}));
  EXPECT_NE(expect.code, 2) << expect.err;
  ASSERT_EQ(server.request_count(), 1);
  EXPECT_EQ(Json::parse(server.requests().at(0).body)["state"], "my text");
  const std::string png =
      write_temp_file("colour.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  auto image = run_clef(
      ask(server, {"--yes-no", "red: Is it red?", "--image", png, "what colour", "--dry-run"}));
  ASSERT_EQ(image.code, 0) << image.err;
  EXPECT_EQ(Json::parse(image.out)["state"], "what colour");
  EXPECT_EQ(Json::parse(image.out)["images"].size(), 1u);
}

TEST(CliNewcomer, ScoreAnswersCarryTheirLevelLabelEverywhere) {
  FakeServer server;
  answer_urgent(server);
  const std::vector<std::string> base = {"x", "--score", urgency, "--choice", team};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(ask(server, args));
  };
  EXPECT_EQ(with({"--format", "values"}).out, "Urgent\nbilling\n");
  const Json json = Json::parse(with({"--json"}).out);
  EXPECT_EQ(json["answers"]["urgency"]["winner"], "Urgent");
  EXPECT_EQ(json["answers"]["urgency"]["level"], 2);  // the index stays for scripts
  EXPECT_NE(with({"--format", "tsv"}).out.find("urgency\tscore\tUrgent\t0.7000"),
            std::string::npos);
  // Gates take the label or the index, and refuse a label the question does not have.
  EXPECT_EQ(with({"--expect", "urgency=Urgent"}).code, 0);
  EXPECT_EQ(with({"--expect", "urgency=2"}).code, 0);
  auto soon = with({"--expect", "urgency=Soon"});
  EXPECT_EQ(soon.code, 1);
  EXPECT_NE(soon.err.find("urgency is \"Urgent\", expected \"Soon\""), std::string::npos);
  auto typo = with({"--expect", "team=technicl"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("\"technicl\" is not an answer of team; it can be \"billing\", "
                          "\"technical\""),
            std::string::npos)
      << typo.err;
  EXPECT_EQ(with({"--expect", "urgency=7"}).code, 2);
  EXPECT_EQ(with({"--expect", "team="}).code, 2);  // an empty label names no answer
}

TEST(CliNewcomer, ExpectReadsLabelsAsEvalReadsGoldLabels) {
  FakeServer server;  // the simulated model: refund's verdict is whatever it is, read once
  const std::vector<std::string> base = {"refund please", "--yes-no", "refund: Refund?", "--json"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(ask(server, args));
  };
  const std::string verdict = Json::parse(with({}).out)["answers"]["refund"]["winner"];
  ASSERT_TRUE(verdict == "yes" || verdict == "no") << verdict;
  // clef eval's gold labels for yes/no (true/false, 1/0, any case) name the same verdicts.
  const std::string as_bool = verdict == "yes" ? "true" : "false";
  const std::string as_digit = verdict == "yes" ? "1" : "0";
  const std::string upper = verdict == "yes" ? "YES" : "NO";
  for (const std::string& written : {verdict, as_bool, as_digit, upper}) {
    EXPECT_EQ(with({"--expect", "refund=" + written}).code, 0) << written;
  }
  const std::string other = verdict == "yes" ? "false" : "true";
  EXPECT_EQ(with({"--expect", "refund=" + other}).code, 1);
  EXPECT_EQ(with({"--expect", "refund=unknown"}).code, 1);  // a gate may expect "unknown"
  EXPECT_EQ(with({"--expect", "refund=maybe"}).code, 2);
}

TEST(CliNewcomer, TheHumanViewShowsAScaleInItsOwnOrder) {
  FakeServer server;
  answer_urgent(server);
  const std::string out = run_clef(ask(server, {"x", "--score", urgency})).out;
  const auto routine = out.find("0 Routine");
  const auto soon = out.find("1 Soon");
  const auto urgent = out.find("2 Urgent");
  ASSERT_NE(urgent, std::string::npos) << out;
  EXPECT_LT(routine, soon);
  EXPECT_LT(soon, urgent);  // the most likely level stays in its place on the scale
  EXPECT_NE(out.find("urgency  Urgent"), std::string::npos) << out;
}

TEST(CliNewcomer, EmptyStatesAreRefusedTheSameWayEverywhere) {
  FakeServer server;
  auto blank = run_clef(ask(server, {"--yes-no", "u: U?", "  "}));
  EXPECT_EQ(blank.code, 2);
  EXPECT_NE(blank.err.find("the state is empty"), std::string::npos) << blank.err;
  auto empty_json = run_clef(ask(server, {"--yes-no", "u: U?", "--state-json", "{}"}));
  EXPECT_EQ(empty_json.code, 2);
  EXPECT_NE(empty_json.err.find("the state is empty"), std::string::npos) << empty_json.err;
  // A CSV row with an empty state is an error line for that item, never a request.
  const std::string csv = write_temp_file("empty_state.csv", "id,state\nA,hello\nB,\nC,bye\n");
  const std::string out = fresh_path("empty_state.jsonl");
  auto batch = run_clef(
      {"batch", csv, "-o", out, "--host", server.base_url(), "--yes-no", "u: U?", "--ordered"});
  EXPECT_EQ(batch.code, 6) << batch.err;
  const auto lines = clef::testing::lines_of(read_file(out));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1]["id"], "B");
  EXPECT_EQ(lines[1]["error"]["message"], "the state is empty: there is nothing to judge");
  EXPECT_EQ(server.request_count(), 2);
}

TEST(CliNewcomer, EveryTextLineBlankOrNotGetsOneOutputLine) {
  FakeServer server;
  auto r = run_clef({"batch", "-", "-o", "-", "--input-format", "text", "--host", server.base_url(),
                     "--yes-no", "u: U?", "--ordered"},
                    "one\n\n   \nfour\n", true);
  EXPECT_EQ(r.code, 6) << r.err;
  const auto lines = clef::testing::lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1]["id"], 2);
  EXPECT_EQ(lines[2]["error"]["message"], "the state is empty (a blank line)");
  EXPECT_TRUE(lines[3].contains("answers"));
}

bool have_curl() {
  return std::system("command -v curl >/dev/null 2>&1") == 0;
}

/// Runs `command` with /bin/sh, as a user pasting it would.
int run_shell(const std::string& command) {
  const std::string script = write_temp_file("printed_curl.sh", command + " >/dev/null\n");
  return std::system(("sh " + script).c_str());
}

TEST(CliNewcomer, PrintCurlRunsAsPrinted) {
  if (!have_curl()) GTEST_SKIP() << "no curl on PATH (.ci/run installs it)";
  FakeServer server(ServerShape::typesafe);
  const std::string token = write_temp_file("curl_token", "tok-for-curl\n");
  const std::vector<std::string> base = {
      "ask", "--backend", "systemone", "--host",       server.base_url(), "--api-token-file",
      token, "--yes-no",  "u: U?",     "a small state"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(args);
  };
  const std::string body = with({"--dry-run"}).out;
  auto printed = with({"--print-curl"});
  ASSERT_EQ(printed.code, 0) << printed.err;
  EXPECT_EQ(printed.out.find("tok-for-curl"), std::string::npos);
  ASSERT_EQ(run_shell(printed.out), 0) << printed.out;
  ASSERT_EQ(server.request_count(), 1);
  EXPECT_EQ(server.requests().at(0).body + "\n", body);
  EXPECT_EQ(server.requests().at(0).header("Authorization"), "Bearer tok-for-curl");

  // 200 KiB of state: more than one argument may hold, so the body goes in a here-document.
  const std::string large = write_temp_file("large_state.txt", std::string(200 * 1024, 'a'));
  auto big =
      run_clef({"ask", "--backend", "systemone", "--host", server.base_url(), "--api-token-file",
                token, "--yes-no", "u: U?", "--state-file", large, "--print-curl"});
  ASSERT_EQ(big.code, 0) << big.err;
  EXPECT_NE(big.out.find("<<'CLEF_BODY'"), std::string::npos);
  ASSERT_EQ(run_shell(big.out), 0);
  ASSERT_EQ(server.request_count(), 2);
  EXPECT_EQ(Json::parse(server.requests().at(1).body)["state"].get<std::string>().size(),
            200u * 1024u);
}

TEST(CliNewcomer, AClosedStdoutEndsTheRunWithAnHonestMessage) {
  FakeServer server;
  const std::string input = write_temp_file("head_in.jsonl", clef::testing::jsonl_tickets(2000));
  const std::string err = fresh_path("head_err.txt");
  const std::string code = fresh_path("head_code.txt");
  const std::string command = "bash -c '\"" + std::string(CLEF_EXE) + "\" batch " + input +
                              " -o - --host " + server.base_url() + " --yes-no \"u: U?\" 2>" + err +
                              " | head -1 >/dev/null; echo ${PIPESTATUS[0]} >" + code + "'";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(read_file(code), "7\n");
  const std::string message = read_file(err);
  EXPECT_NE(message.find("stdout cannot be written, its reader closed it"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("free space"), std::string::npos) << message;
  EXPECT_EQ(message.find("--resume"), std::string::npos) << message;
  EXPECT_LT(server.request_count(), 2000);
}

TEST(CliNewcomer, ContradictoryFlagsAreRefused) {
  FakeServer server;
  auto json_tsv = run_clef(ask(server, {"x", "--yes-no", "u: U?", "--json", "--format", "tsv"}));
  EXPECT_EQ(json_tsv.code, 2);
  EXPECT_NE(json_tsv.err.find("excludes"), std::string::npos) << json_tsv.err;
  auto dry_curl = run_clef(ask(server, {"x", "--yes-no", "u: U?", "--dry-run", "--print-curl"}));
  EXPECT_EQ(dry_curl.code, 2);
  const std::string input = write_temp_file("resume_in.jsonl", clef::testing::jsonl_tickets(1));
  auto resume =
      run_clef({"batch", input, "--resume", "--host", server.base_url(), "--yes-no", "u: U?"});
  EXPECT_EQ(resume.code, 2);
  EXPECT_NE(resume.err.find("--resume needs -o FILE"), std::string::npos) << resume.err;
  auto force = run_clef({"batch", input, "-o", fresh_path("force.jsonl"), "--force-resume",
                         "--host", server.base_url(), "--yes-no", "u: U?"});
  EXPECT_EQ(force.code, 2);
  EXPECT_EQ(server.request_count(), 0);
}

TEST(CliNewcomer, ColourFollowsTheColorFlagAndTerm) {
  FakeServer server;
  const auto args = ask(server, {"x", "--yes-no", "u: U?"});
  const char* term = std::getenv("TERM");
  const std::string saved = term ? term : "";
  setenv("TERM", "xterm-256color", 1);
  unsetenv("NO_COLOR");
  EXPECT_NE(run_clef_on_terminal(args).out.find("\x1b["), std::string::npos);
  setenv("TERM", "dumb", 1);
  EXPECT_EQ(run_clef_on_terminal(args).out.find("\x1b["), std::string::npos);
  auto always = args;
  always.insert(always.begin() + 1, {"--color", "always"});
  EXPECT_NE(run_clef(always).out.find("\x1b["), std::string::npos);  // even off a terminal
  auto never = args;
  never.insert(never.end(), {"--color", "never"});
  setenv("TERM", "xterm-256color", 1);
  EXPECT_EQ(run_clef_on_terminal(never).out.find("\x1b["), std::string::npos);
  auto bad = args;
  bad.insert(bad.end(), {"--color", "sometimes"});
  EXPECT_EQ(run_clef(bad).code, 2);
  if (term)
    setenv("TERM", saved.c_str(), 1);
  else
    unsetenv("TERM");
}

TEST(CliNewcomer, ABatchVerboseShowsEachCall) {
  FakeServer server;
  const std::string input = write_temp_file("verbose_in.jsonl", clef::testing::jsonl_tickets(2));
  auto r = run_clef({"batch", input, "-o", fresh_path("verbose.jsonl"), "--host", server.base_url(),
                     "--yes-no", "u: U?", "-v"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::size_t calls = 0;
  for (auto at = r.err.find("clef: < HTTP 200"); at != std::string::npos;
       at = r.err.find("clef: < HTTP 200", at + 1))
    ++calls;
  // The two decisions, and the model's digest asked once for the run record beside -o.
  EXPECT_EQ(calls, 3u) << r.err;
  EXPECT_EQ(r.err.find("GET http://"), r.err.rfind("GET http://")) << r.err;
  EXPECT_NE(r.err.find("/api/tags"), std::string::npos) << r.err;
}

TEST(CliNewcomer, BatchWritesCsvAndTsvForSpreadsheets) {
  FakeServer server;
  const std::string csv = write_temp_file(
      "sheet.csv", "id,subject,body,agent\nA1,Refund,\"charged twice, refund\",ann\nA2,,,bob\n");
  const std::string out = fresh_path("sheet_out.csv");
  auto r =
      run_clef({"batch", csv, "-o", out, "--host", server.base_url(), "--ordered", "--yes-no",
                "refund: Refund?", "--state-columns", "subject,body", "--output-format", "csv"});
  EXPECT_EQ(r.code, 6) << r.err;  // A2's state columns are blank: an error row, not a request
  const std::string text = read_file(out);
  const auto first_newline = text.find('\n');
  EXPECT_EQ(text.substr(0, first_newline),
            "id,subject,body,agent,refund,refund_probability,refund_confidence,status,error");
  EXPECT_NE(text.find("\nA1,Refund,\"charged twice, refund\",ann,"), std::string::npos) << text;
  EXPECT_NE(text.find("\nA2,,,bob,,,,error,invalid_input: the state is empty"), std::string::npos)
      << text;
  ASSERT_EQ(server.request_count(), 1);
  // The state is a JSON object of the named columns, in the order given.
  EXPECT_EQ(server.requests().at(0).body.find(
                R"("state":{"subject":"Refund","body":"charged twice, refund"})"),
            server.requests().at(0).body.find("\"state\""))
      << server.requests().at(0).body;

  const std::string jsonl = write_temp_file("sheet_in.jsonl", clef::testing::jsonl_tickets(2));
  auto tsv = run_clef({"batch", jsonl, "-o", "-", "--host", server.base_url(), "--ordered",
                       "--yes-no", "refund: Refund?", "--output-format", "tsv"});
  ASSERT_EQ(tsv.code, 0) << tsv.err;
  EXPECT_EQ(tsv.out.substr(0, tsv.out.find('\n')),
            "id\trefund\trefund_probability\trefund_confidence\tstatus\terror");
  EXPECT_NE(tsv.out.find("\nT1\t"), std::string::npos) << tsv.out;

  // What cannot work together is refused before anything is sent.
  const std::size_t sent = server.request_count();
  EXPECT_EQ(run_clef({"batch", jsonl, "-o", fresh_path("x.jsonl"), "--host", server.base_url(),
                      "--yes-no", "u: U?", "--state-columns", "a,b"})
                .code,
            2);
  EXPECT_EQ(run_clef({"batch", csv, "-o", fresh_path("y.csv"), "--host", server.base_url(),
                      "--yes-no", "u: U?", "--output-format", "csv", "--dedupe"})
                .code,
            2);
  EXPECT_EQ(run_clef({"batch", csv, "-o", fresh_path("z.csv"), "--host", server.base_url(),
                      "--yes-no", "u: U?", "--state-columns", "nope"})
                .code,
            2);
  EXPECT_EQ(server.request_count(), sent);
}

TEST(CliNewcomer, AFileThatNeverEndsIsRefusedNotRead) {
  auto token = run_clef({"ask", "x", "--yes-no", "u: U?", "--backend", "systemone", "--host",
                         "http://127.0.0.1:9", "--api-token-file", "/dev/zero", "--dry-run"});
  EXPECT_EQ(token.code, 2);
  EXPECT_NE(token.err.find("the token file is larger than 64 KiB at /dev/zero"), std::string::npos)
      << token.err;
}

TEST(CliNewcomer, HostHelpSaysWhichDefaultIsWhose) {
  const std::string help = run_clef({"ask", "--help"}).out;
  EXPECT_NE(help.find("workers-ai: https://api.cloudflare.com/client/v4"), std::string::npos)
      << help;
  EXPECT_NE(help.find("ollama: OLLAMA_HOST"), std::string::npos) << help;
}

TEST(CliNewcomer, HelpNamesACommandAndATypoGetsASuggestion) {
  auto help_batch = run_clef({"help", "batch"});
  EXPECT_EQ(help_batch.code, 0) << help_batch.err;
  EXPECT_NE(help_batch.out.find("Decide every state"), std::string::npos) << help_batch.out;
  EXPECT_NE(help_batch.out.find("Usage: clef batch [OPTIONS] INPUT"), std::string::npos)
      << help_batch.out;
  EXPECT_NE(run_clef({"batch", "--help"}).out.find("Usage: clef batch [OPTIONS] INPUT"),
            std::string::npos);
  auto help = run_clef({"help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.out, run_clef({"--help"}).out);

  auto typo = run_clef({"bach", "tickets.jsonl"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("'bach' is not a clef command (did you mean `batch`?)"),
            std::string::npos)
      << typo.err;
  auto after_color = run_clef({"--color", "never", "evl"});
  EXPECT_EQ(after_color.code, 2);
  EXPECT_NE(after_color.err.find("did you mean `eval`?"), std::string::npos) << after_color.err;
  auto far = run_clef({"frobnicate"});
  EXPECT_EQ(far.code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
  auto help_typo = run_clef({"help", "bach"});
  EXPECT_EQ(help_typo.code, 2);
  EXPECT_NE(help_typo.err.find("did you mean `batch`?"), std::string::npos) << help_typo.err;
}

TEST(CliNewcomer, BackendHelpAndErrorsNameTheBackendsOnly) {
  const std::string help = run_clef({"batch", "--help"}).out;
  EXPECT_NE(help.find("--backend NAME=ollama"), std::string::npos) << help;
  EXPECT_EQ(help.find("->"), std::string::npos) << help;  // CLI11's map, shown before
  for (const std::string name : {"bogus", "0", "2"}) {
    auto r = run_clef({"ask", "--backend", name, "--yes-no", "u: U?", "x", "--dry-run"});
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_NE(
        r.err.find("unknown backend '" + name + "': use ollama, workers-ai, systemone or openai"),
        std::string::npos)
        << r.err;
  }
  auto named = run_clef({"ask", "--backend", "workers-ai", "--account-id", "a", "--yes-no", "u: U?",
                         "x", "--dry-run"});
  EXPECT_EQ(named.code, 0) << named.err;
  EXPECT_NE(named.err.find("/accounts/a/ai/run/"), std::string::npos) << named.err;
}

TEST(CliNewcomer, PipedTextReadAsJsonlSaysHowToReadText) {
  FakeServer server;
  const std::string out = fresh_path("piped_text.jsonl");
  auto r = run_clef({"batch", "-", "-o", out, "--host", server.base_url(), "--yes-no", "u: U?"},
                    "my printer is on fire\nit still is\n", true);
  EXPECT_EQ(r.code, 6) << r.err;
  EXPECT_EQ(server.request_count(), 0);
  const std::string written = read_file(out);
  EXPECT_NE(written.find("for plain text, one state per line, add --input-format text"),
            std::string::npos)
      << written;
  // A line that looks like JSON but is broken gets no such hint.
  auto broken = run_clef({"batch", "-", "-o", fresh_path("piped_broken.jsonl"), "--host",
                          server.base_url(), "--yes-no", "u: U?"},
                         "{\"id\": 1, \"state\": \n", true);
  EXPECT_EQ(broken.code, 6) << broken.err;
  auto text = run_clef({"batch", "-", "-o", fresh_path("piped_text_ok.jsonl"), "--host",
                        server.base_url(), "--yes-no", "u: U?", "--input-format", "text"},
                       "my printer is on fire\nit still is\n", true);
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(server.request_count(), 2);
}

TEST(CliNewcomer, ACsvWithoutTheIdColumnListsTheColumnsItHas) {
  const std::string csv = write_temp_file("no_id.csv", "ident,state\nA1,hello\n");
  auto r = run_clef({"batch", csv, "-o", fresh_path("no_id.jsonl"), "--host", "http://127.0.0.1:9",
                     "--yes-no", "u: U?"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("the header has no \"id\" column (--id-field); the header has \"ident\", "
                       "\"state\""),
            std::string::npos)
      << r.err;
}

TEST(CliNewcomer, AMistypedFlagGetsTheFlagMeant) {
  auto hosts = run_clef({"batch", "--hots", "hosts.txt"});
  EXPECT_EQ(hosts.code, 2);
  EXPECT_NE(hosts.err.find("not expected: --hots (did you mean `--hosts`?)"), std::string::npos)
      << hosts.err;
  auto json = run_clef({"ask", "--jsn", "x", "--yes-no", "u: U?"});
  EXPECT_EQ(json.code, 2);
  EXPECT_NE(json.err.find("(did you mean `--json`?)"), std::string::npos) << json.err;
  // Nothing within two edits: no guess.
  auto far = run_clef({"ask", "--frobnicate", "x", "--yes-no", "u: U?"});
  EXPECT_EQ(far.code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(CliNewcomer, ErrorsNameWhatAPersonTypedAndOnlySyntaxGetsTheSyntaxHint) {
  // A file that cannot be opened says why and where; --help would not help with it.
  auto missing = run_clef({"ask", "--state-file", "/nonexistent/state.txt", "--yes-no", "u: U?"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("No such file or directory at /nonexistent/state.txt"),
            std::string::npos)
      << missing.err;
  EXPECT_EQ(missing.err.find("--help"), std::string::npos) << missing.err;
  // The library's field names are not what anyone typed: the flag and the variable are.
  const std::string token = write_temp_file("newcomer_token.txt", "not-a-real-token\n");
  auto account = run_clef({"ask", "x", "--yes-no", "u: U?", "--backend", "workers-ai",
                           "--api-token-file", token, "--dry-run"});
  EXPECT_EQ(account.code, 2);
  EXPECT_EQ(account.err.find(" at account_id"), std::string::npos) << account.err;
  EXPECT_NE(account.err.find("at --account-id / CLOUDFLARE_ACCOUNT_ID"), std::string::npos)
      << account.err;
}

TEST(CliNewcomer, QuietLeavesOnlyErrorsWarningsAndTheirNextStep) {
  FakeServer server;
  const std::string input = write_temp_file("quiet_in.jsonl", clef::testing::jsonl_tickets(5));
  const std::string output = clef::testing::fresh_path("quiet_out.jsonl");
  auto plain = run_clef(clef::testing::batch_args(server.base_url(), input, output, {}));
  EXPECT_EQ(plain.code, 0);
  EXPECT_NE(plain.err.find("5 written"), std::string::npos) << plain.err;
  // Before or after the command, as --color: no summary, the same output and exit code.
  for (const bool before : {true, false}) {
    auto args = clef::testing::batch_args(server.base_url(), input, output, {"--overwrite"});
    args.insert(before ? args.begin() : args.end(), "--quiet");
    auto quiet = run_clef(args);
    EXPECT_EQ(quiet.code, 0);
    EXPECT_EQ(quiet.err, "") << quiet.err;
    EXPECT_EQ(clef::testing::lines_by_id(output).size(), 5u);
  }
  // An error keeps its next step.
  auto down = run_clef({"--quiet", "ask", "x", "--yes-no", "u: U?", "--host",
                        "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port()),
                        "--retries", "0"});
  EXPECT_EQ(down.code, 5);
  EXPECT_NE(down.err.find("clef: error: connection_failed"), std::string::npos) << down.err;
  EXPECT_NE(down.err.find("clef: is Ollama running at"), std::string::npos) << down.err;
  // -q is still --questions.
  auto questions = run_clef({"ask", "x", "-q", "/nonexistent/questions.json", "--dry-run"});
  EXPECT_EQ(questions.code, 2);
  EXPECT_NE(questions.err.find("/nonexistent/questions.json"), std::string::npos) << questions.err;
}

}  // namespace
