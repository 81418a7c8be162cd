// clef ask / models / doctor, run in-process against a real local server.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <variant>

#include "clef/version.hpp"
#include "cli_runner.hpp"
#include "common/exit_codes.hpp"
#include "fake_server.hpp"
#include "flags/gateway_flags.hpp"
#include "wait_until.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::run_clef;
using clef::testing::Scripted;
using clef::testing::ServerShape;
using clef::testing::write_temp_file;
using Json = nlohmann::ordered_json;

const std::string card_ticket =
    R"({"ticket": "I was charged twice. Please refund the extra payment."})";
const std::string team_choice =
    "team: Which team should handle this ticket? | billing=Payments and refunds | "
    "technical=Bugs and integrations | other=None of the above";
const std::string card_body =
    R"({"model":"clef-flash","state":{"ticket":"I was charged twice. Please refund the extra payment."},"questions":{"team":{"type":"choice","instructions":"Which team should handle this ticket?","criteria":{"billing":"Payments and refunds","technical":"Bugs and integrations","other":"None of the above"}}}})";

std::vector<std::string> ask(const FakeServer& server, std::vector<std::string> extra) {
  std::vector<std::string> args = {"ask", "--host", server.base_url(), "--retries", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliAsk, CardExampleSendsTheCardBodyAndPrintsTheWinner) {
  FakeServer server;
  auto r = run_clef(ask(server, {"--state-json", card_ticket, "--choice", team_choice}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(server.requests().at(0).body, card_body);
  EXPECT_EQ(server.requests().at(0).path, "/v1/systemone");
  EXPECT_NE(r.out.find("team  billing   97.6%"), std::string::npos) << r.out;
  EXPECT_LT(r.out.find("billing    "), r.out.find("technical  "));  // most likely first
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos);                // no colour off a terminal
}

TEST(CliAsk, DryRunPrintsTheCardBodyAndSendsNothing) {
  FakeServer server;
  auto r =
      run_clef(ask(server, {"--state-json", card_ticket, "--choice", team_choice, "--dry-run"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, card_body + "\n");
  EXPECT_NE(r.err.find("POST " + server.base_url() + "/v1/systemone"), std::string::npos);
  EXPECT_EQ(server.request_count(), 0);
}

TEST(CliAsk, EachQuestionTypeInlineInCommandLineOrder) {
  FakeServer server;
  auto r = run_clef(
      ask(server, {"Server down since 9am", "--score", "sev: How bad? | None | Some | Total",
                   "--yes-no", "urgent: Is it urgent? | true=Needs action today | false=Can wait",
                   "--choice", "team: Which team? | ops | billing=Money", "--format", "values"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      server.requests().at(0).body,
      R"({"model":"clef-flash","state":"Server down since 9am","questions":{)"
      R"("sev":{"type":"score","instructions":"How bad?","criteria":["None","Some","Total"]},)"
      R"("urgent":{"type":"noul","instructions":"Is it urgent?","criteria":{"true":"Needs action today","false":"Can wait"}},)"
      R"("team":{"type":"choice","instructions":"Which team?","criteria":{"ops":null,"billing":"Money"}}}})");
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  EXPECT_EQ(lines, 3);
}

TEST(CliAsk, QuestionsFileInWireFormatKeepsOrder) {
  FakeServer server;
  const std::string questions =
      R"({"refund": {"type": "noul", "instructions": "Asks for a refund?"},
      "team": {"type": "choice", "instructions": "Which team?", "criteria": {"billing": "Payments", "other": null}}})";
  auto r = run_clef(ask(server, {"x", "--questions", write_temp_file("q.json", questions),
                                 "--yes-no", "later: Later?"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      server.requests().at(0).body,
      R"({"model":"clef-flash","state":"x","questions":{"refund":{"type":"noul","instructions":"Asks for a refund?"},)"
      R"("team":{"type":"choice","instructions":"Which team?","criteria":{"billing":"Payments","other":null}},)"
      R"("later":{"type":"noul","instructions":"Later?"}}})");
}

TEST(CliAsk, SeveralQuestionsFilesAreMergedInOrderAndStructuredGuidanceIsSent) {
  FakeServer server;
  const std::string first = write_temp_file(
      "q_first.json",
      R"({"team": {"type": "choice", "instructions": {"question": "Which team?", "focus": "main ask"},)"
      R"( "criteria": {"billing": {"what": "Money"}, "other": null}}})");
  const std::string second = write_temp_file(
      "q_second.json", R"({"refund": {"type": "noul", "instructions": "Refund?"}})");
  auto r = run_clef(ask(server, {"x", "-q", first, "-q", second}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      server.requests().at(0).body,
      R"({"model":"clef-flash","state":"x","questions":{)"
      R"("team":{"type":"choice","instructions":{"question":"Which team?","focus":"main ask"},)"
      R"("criteria":{"billing":{"what":"Money"},"other":null}},)"
      R"("refund":{"type":"noul","instructions":"Refund?"}}})");
  auto twice = run_clef({"ask", "x", "-q", second, "-q", second, "--dry-run"});
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("\"refund\" is used twice"), std::string::npos) << twice.err;
}

TEST(CliAsk, MalformedQuestionFilesSayWhatAndWhere) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"team": {"type": "choice", "instructions": "Which?", "criteria": {"a": "A"}}})",
       "bad_questions.json: questions.team"},
      {R"({"team": {"type": "choice", "instructions": "Which?", "criteria": ["a", "b"]}})",
       "questions.team.criteria"},
      {R"({"team": {"type": "vote", "instructions": "Which?"}})", "questions.team.type"},
      {R"({"team": {"type": "noul", "instructions": "Which?", "weight": 2}})",
       "questions.team.weight"},
      {R"({"team": {"type": "noul", "instructions": "Which?", "criteria": {"maybe": "x"}}})",
       "questions.team.criteria.maybe"},
      {R"({"team": {"type": "score", "instructions": "How?", "criteria": ["a", 2]}})",
       "questions.team.criteria[1]"},
      {R"({"team": {"type": "noul", "instructions": true}})", "questions.team.instructions"},
      {R"({"bad name": {"type": "noul", "instructions": "x"}})", "questions.bad name"},
      {R"({"team": {"type": "noul", )", "byte 26"},
      {R"([])", "bad_questions.json: questions, byte 0"},
  };
  for (const auto& [content, where] : cases) {
    const std::string path = write_temp_file("bad_questions.json", content);
    auto r = run_clef({"ask", "x", "--questions", path, "--dry-run"});
    EXPECT_EQ(r.code, 2) << content;
    EXPECT_NE(r.err.find("clef: error: invalid_input"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(where), std::string::npos) << content << "\n" << r.err;
  }
}

TEST(CliAsk, StateFromEverySource) {
  FakeServer server;
  const std::string yes_no = "refund: Refund?";
  auto body_of = [&](const std::vector<std::string>& args, const std::string& in = {},
                     bool piped = false) {
    auto r = run_clef(args, in, piped);
    EXPECT_EQ(r.code, 0) << r.err;
    return Json::parse(r.out)["state"].dump();
  };
  EXPECT_EQ(body_of({"ask", "positional", "--yes-no", yes_no, "--dry-run"}), R"("positional")");
  EXPECT_EQ(body_of({"ask", "--state-file", write_temp_file("s.txt", "from a file\n"), "--yes-no",
                     yes_no, "--dry-run"}),
            R"("from a file")");
  EXPECT_EQ(body_of({"ask", "--state-file", "-", "--yes-no", yes_no, "--dry-run"}, "dash stdin\n"),
            R"("dash stdin")");
  EXPECT_EQ(body_of({"ask", "--yes-no", yes_no, "--dry-run"}, "piped\n", true), R"("piped")");
  EXPECT_EQ(body_of({"ask", "--state-json", R"({"z":1,"a":[2]})", "--yes-no", yes_no, "--dry-run"}),
            R"({"z":1,"a":[2]})");
  EXPECT_EQ(body_of({"ask", "--state-json", "@" + write_temp_file("s.json", R"(["b","a"])"),
                     "--yes-no", yes_no, "--dry-run"}),
            R"(["b","a"])");

  auto two = run_clef({"ask", "text", "--state-json", "{}", "--yes-no", yes_no, "--dry-run"});
  EXPECT_EQ(two.code, 2);
  EXPECT_NE(two.err.find("one way"), std::string::npos);
  auto none = run_clef({"ask", "--yes-no", yes_no, "--dry-run"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("no state"), std::string::npos);
  auto scalar = run_clef({"ask", "--state-json", "42", "--yes-no", yes_no, "--dry-run"});
  EXPECT_EQ(scalar.code, 2);
  auto broken = run_clef({"ask", "--state-json", R"({"a": )", "--yes-no", yes_no, "--dry-run"});
  EXPECT_NE(broken.err.find("--state-json state, byte 6"), std::string::npos) << broken.err;
}

TEST(CliAsk, ImagesAreSniffedAndSentAsRawBase64ToOllama) {
  FakeServer server;
  const std::string png =
      write_temp_file("receipt.dat", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  auto r = run_clef(ask(server, {"x", "--yes-no", "u: Urgent?", "--image", png, "--image", png}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(server.requests().at(0).body)["images"],
            Json::array({"iVBORw0KGgoAAAANSUhEUg==", "iVBORw0KGgoAAAANSUhEUg=="}));
  auto gif = run_clef(
      ask(server, {"x", "--yes-no", "u: Urgent?", "--image", write_temp_file("a.png", "GIF89a")}));
  EXPECT_EQ(gif.code, 2);
  EXPECT_NE(gif.err.find("not a PNG, JPEG or WebP"), std::string::npos);
  auto missing =
      run_clef(ask(server, {"x", "--yes-no", "u: Urgent?", "--image", "/nonexistent.png"}));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nonexistent.png"), std::string::npos);
}

TEST(CliAsk, OutputFormats) {
  FakeServer server;
  const std::vector<std::string> base = {"--state-json", card_ticket, "--choice",
                                         team_choice,    "--yes-no",  "refund: Refund?"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(ask(server, args));
  };
  auto json = with({"--json"});
  ASSERT_EQ(json.code, 0);
  const Json doc = Json::parse(json.out);
  EXPECT_EQ(doc["model"], "clef-flash");
  EXPECT_EQ(doc["answers"]["team"]["winner"], "billing");
  EXPECT_EQ(doc["answers"]["team"]["probabilities"].begin().key(), "billing");
  EXPECT_EQ(doc["answers"]["refund"]["winner"], "yes");
  EXPECT_GT(doc["usage"]["input_tokens"].get<int>(), 0);
  EXPECT_EQ(with({"--format", "json"}).out, json.out);

  auto jsonl = with({"--format", "jsonl"});
  EXPECT_EQ(Json::parse(jsonl.out.substr(0, jsonl.out.find('\n')))["question"], "team");
  auto tsv = with({"--format", "tsv"});
  EXPECT_EQ(tsv.out.substr(0, tsv.out.find('\n')),
            "question\ttype\twinner\tprobability\tconfidence\tstatus");
  EXPECT_NE(tsv.out.find("team\tchoice\tbilling\t0.9764\t"), std::string::npos) << tsv.out;
  EXPECT_EQ(with({"--format", "values"}).out, "billing\nyes\n");
  EXPECT_EQ(with({"--format", "yaml"}).code, 2);
}

TEST(CliAsk, TsvKeepsEachLabelInOneCellAndNoneIsAFormula) {
  // A label is whatever the question file names: a tab, a line break or a quote in one, or a
  // leading "=", must not make more columns or rows, nor a formula in a spreadsheet (as clef
  // batch --output-format tsv writes them).
  FakeServer server;
  server.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    return Scripted{200, R"({"model":"clef-flash","answers":{"team":{"type":"choice",)"
                         R"("choice":"a\tb\nc","probabilities":{"a\tb\nc":0.7,"=1+2":0.3}},)"
                         R"("second":{"type":"choice","choice":"=1+2","probabilities":)"
                         R"({"a\tb\nc":0.2,"=1+2":0.8}}}})"};
  });
  const std::string questions =
      R"({"team": {"type": "choice", "instructions": "Which?", "criteria": {"a\tb\nc": null, "=1+2": null}},
          "second": {"type": "choice", "instructions": "Which?", "criteria": {"a\tb\nc": null, "=1+2": null}}})";
  auto r = run_clef(ask(server, {"x", "--questions", write_temp_file("tsv_labels.json", questions),
                                 "--format", "tsv"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\nteam\tchoice\t\"a\tb\nc\"\t0.7000\t"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nsecond\tchoice\t'=1+2\t0.8000\t"), std::string::npos) << r.out;
}

TEST(CliAsk, TsvLeavesTheCellsOfAnAnswerWithoutAValueEmpty) {
  // A refused answer has no probability: 0.0000 in its cells read as a real 0 to a script.
  FakeServer server;
  server.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    return Scripted{200, R"({"model":"clef-flash","answers":{"u":{"type":"refusal",)"
                         R"("message":"I won't \u001b[31m"}}})"};
  });
  auto r = run_clef(ask(server, {"x", "--yes-no", "u: U?", "--format", "tsv"}));
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.out.find("\nu\tnoul\t\t\t\trefused\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.0000"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
}

TEST(CliAsk, GatesExitOneWithTheReason) {
  FakeServer server;
  const std::vector<std::string> base = {"--state-json", card_ticket, "--choice", team_choice};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(ask(server, args));
  };
  EXPECT_EQ(with({"--expect", "team=billing"}).code, 0);
  auto wrong = with({"--expect", "team=technical"});
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("team is \"billing\", expected \"technical\""), std::string::npos);
  EXPECT_EQ(with({"--min-confidence", "0.8"}).code, 0);  // entropy confidence of TV-3: 0.883
  auto low = with({"--min-confidence", "0.95"});
  EXPECT_EQ(low.code, 1);
  EXPECT_NE(low.err.find("below --min-confidence"), std::string::npos);
  EXPECT_EQ(with({"--expect", "nope=x"}).code, 2);
  EXPECT_EQ(with({"--expect", "team"}).code, 2);
}

TEST(CliAsk, PrintCurlNamesTheTokenSourceNeverItsValue) {
  const std::string token_file = write_temp_file("token", "very-secret-token\n");
  auto r = run_clef({"ask", "x", "--yes-no", "u: Urgent?", "--backend", "workers-ai",
                     "--account-id", "acc1", "--api-token-file", token_file, "--print-curl"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"Authorization: Bearer $(cat '" + token_file + "')\""), std::string::npos)
      << r.out;
  setenv("CLOUDFLARE_API_TOKEN", "from-the-environment", 1);
  auto from_env = run_clef({"ask", "x", "--yes-no", "u: Urgent?", "--backend", "workers-ai",
                            "--account-id", "acc1", "--print-curl"});
  unsetenv("CLOUDFLARE_API_TOKEN");
  EXPECT_NE(from_env.out.find("\"Authorization: Bearer $CLOUDFLARE_API_TOKEN\""), std::string::npos)
      << from_env.out;
  EXPECT_EQ(from_env.out.find("from-the-environment"), std::string::npos);
  EXPECT_NE(r.out.find("/accounts/acc1/ai/run/@cf/cloudflare/clef-flash"), std::string::npos);
  EXPECT_EQ(r.out.find("very-secret"), std::string::npos);
  auto dry =
      run_clef({"ask", "x", "--yes-no", "u: Urgent?", "--backend", "workers-ai", "--account-id",
                "acc1", "--api-token-file", token_file, "--dry-run", "--verbose"});
  EXPECT_EQ(dry.err.find("very-secret"), std::string::npos);
  EXPECT_NE(dry.err.find("Authorization: Bearer <redacted>"), std::string::npos);
}

TEST(CliAsk, TokensAreNeverArguments) {
  auto r = run_clef({"ask", "x", "--yes-no", "u: U?", "--api-token", "abc"});
  EXPECT_EQ(r.code, 2);
}

TEST(CliAsk, WorkersEndToEndWithTokenFromFileAndVerboseRedacted) {
  FakeServer server(ServerShape::workers_ai);
  ASSERT_TRUE(server.set_token("test-token"));  // by default the mock takes any token
  auto r =
      run_clef({"ask", "--backend", "workers-ai", "--host", server.base_url() + "/client/v4",
                "--account-id", "acc9", "--api-token-file", write_temp_file("tok", "test-token\n"),
                "--verbose", "--state-json", card_ticket, "--choice", team_choice, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["request_id"], "cf-0-5e3f0c1a");
  EXPECT_EQ(server.requests().at(0).header("Authorization"), "Bearer test-token");
  EXPECT_EQ(r.err.find("test-token"), std::string::npos);
  auto bad = run_clef({"ask", "--backend", "workers-ai", "--host", server.base_url() + "/client/v4",
                       "--account-id", "acc9", "--api-token-file", write_temp_file("tok2", "wrong"),
                       "x", "--yes-no", "u: U?"});
  EXPECT_EQ(bad.code, 3);
  EXPECT_NE(bad.err.find("CLOUDFLARE_API_TOKEN"), std::string::npos);
}

// AI Gateway from the shell: the flags become the cf-aig-* headers, the gateway's report shows
// in -v and in the JSON, and a limit is refused before anything is sent.
TEST(CliAsk, ThroughAiGatewayItsFlagsAndItsReport) {
  FakeServer server(ServerShape::workers_ai);
  server.set_gateway("support-gw");
  const std::vector<std::string> args = {"ask",
                                         "--backend",
                                         "workers-ai",
                                         "--gateway",
                                         "acc9/support-gw",
                                         "--host",
                                         server.base_url() + "/v1",
                                         "--api-token-file",
                                         write_temp_file("tok-gw", "test-token\n"),
                                         "--aig-cache-ttl",
                                         "600",
                                         "--aig-no-log-payload",
                                         "--aig-metadata",
                                         "team=support",
                                         "--aig-metadata",
                                         "ticket=42",
                                         "-v",
                                         "--json",
                                         "x",
                                         "--yes-no",
                                         "u: Urgent?"};
  auto first = run_clef(args);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(Json::parse(first.out)["gateway"]["cache_status"], "MISS");
  EXPECT_NE(first.err.find("POST " + server.base_url() +
                           "/v1/acc9/support-gw/workers-ai/@cf/cloudflare/clef-flash"),
            std::string::npos)
      << first.err;
  EXPECT_NE(first.err.find(R"(cf-aig-metadata: {"team":"support","ticket":42})"), std::string::npos)
      << first.err;
  EXPECT_NE(first.err.find("cf-aig-collect-log-payload: false"), std::string::npos);
  EXPECT_NE(first.err.find("cf-aig-cache-status MISS"), std::string::npos) << first.err;
  EXPECT_EQ(first.err.find("test-token"), std::string::npos);
  auto again = run_clef(args);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(Json::parse(again.out)["gateway"]["cache_status"], "HIT");
  const int sent = server.request_count();

  std::vector<std::string> six = args;
  for (const char* extra : {"a=1", "b=2", "c=3", "d=4"}) {
    six.push_back("--aig-metadata");
    six.push_back(extra);
  }
  auto refused = run_clef(six);
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("--aig-metadata: at most 5 entries (AI Gateway keeps 5 and silently "
                             "drops the rest), not 6"),
            std::string::npos)
      << refused.err;
  std::vector<std::string> no_gateway = args;
  no_gateway[4] = "support-gw";  // not ACCOUNT/GATEWAY
  auto malformed = run_clef(no_gateway);
  EXPECT_EQ(malformed.code, 2);
  EXPECT_NE(malformed.err.find("--gateway: 'support-gw' is not ACCOUNT/GATEWAY"), std::string::npos)
      << malformed.err;
  EXPECT_EQ(server.request_count(), sent);

  // --print-curl sends the same request: the gateway's headers too.
  std::vector<std::string> curl = args;
  curl.push_back("--print-curl");
  auto printed = run_clef(curl);
  ASSERT_EQ(printed.code, 0) << printed.err;
  EXPECT_NE(printed.out.find("-H 'cf-aig-collect-log-payload: false'"), std::string::npos)
      << printed.out;
  EXPECT_NE(printed.out.find("-H 'cf-aig-cache-ttl: 600'"), std::string::npos) << printed.out;
  // An empty --gateway (an unset "$GATEWAY") and a clashing --account-id are refused, not ignored.
  std::vector<std::string> empty = args;
  empty[4] = "";
  EXPECT_EQ(run_clef(empty).code, 2);
  std::vector<std::string> clash = args;
  clash.insert(clash.end(), {"--account-id", "other"});
  auto clashing = run_clef(clash);
  EXPECT_EQ(clashing.code, 2);
  EXPECT_NE(clashing.err.find("its account 'acc9' is not --account-id's 'other'"),
            std::string::npos)
      << clashing.err;
  // The account in the environment is the same account given another way: checked too.
  setenv("CLOUDFLARE_ACCOUNT_ID", "other", 1);
  auto from_environment = run_clef(args);
  unsetenv("CLOUDFLARE_ACCOUNT_ID");
  EXPECT_EQ(from_environment.code, 2);
  EXPECT_NE(from_environment.err.find("its account 'acc9' is not CLOUDFLARE_ACCOUNT_ID's 'other'"),
            std::string::npos)
      << from_environment.err;
  EXPECT_EQ(server.request_count(), sent);
}

TEST(CliAsk, AnAuthenticatedGatewaysTokenComesFromItsFileAndIsNeverShown) {
  FakeServer server(ServerShape::workers_ai);
  server.set_gateway("support-gw");
  server.set_gateway_token("gw-secret-77");
  const std::string gateway_token = write_temp_file("tok-aig", "gw-secret-77\n");
  std::vector<std::string> args = {"ask",
                                   "--backend",
                                   "workers-ai",
                                   "--gateway",
                                   "acc9/support-gw",
                                   "--host",
                                   server.base_url() + "/v1",
                                   "--api-token-file",
                                   write_temp_file("tok-gw2", "test-token\n"),
                                   "x",
                                   "--yes-no",
                                   "u: Urgent?"};
  auto without = run_clef(args);
  EXPECT_EQ(without.code, 3) << without.err;
  EXPECT_NE(without.err.find("for an Authenticated Gateway, its token (CF_AIG_TOKEN or "
                             "--aig-token-file)"),
            std::string::npos)
      << without.err;
  args.insert(args.end(), {"--aig-token-file", gateway_token, "-v"});
  auto with = run_clef(args);
  ASSERT_EQ(with.code, 0) << with.err;
  EXPECT_NE(with.err.find("cf-aig-authorization: Bearer <redacted>"), std::string::npos)
      << with.err;
  EXPECT_EQ((with.out + with.err).find("gw-secret-77"), std::string::npos);
  args.push_back("--print-curl");
  auto curl = run_clef(args);
  ASSERT_EQ(curl.code, 0) << curl.err;
  EXPECT_NE(curl.out.find("-H \"cf-aig-authorization: Bearer $(cat '" + gateway_token + "')\""),
            std::string::npos)
      << curl.out;
  EXPECT_EQ(curl.out.find("gw-secret-77"), std::string::npos) << curl.out;

  // Without a gateway the token has nowhere to go: refused, as the other --aig-* flags are.
  auto stray = run_clef({"ask", "--backend", "workers-ai", "--account-id", "acc9", "--host",
                         server.base_url() + "/client/v4", "--api-token-file",
                         write_temp_file("tok-gw3", "test-token\n"), "--aig-token-file",
                         gateway_token, "x", "--yes-no", "u: Urgent?"});
  EXPECT_EQ(stray.code, 2) << stray.err;
  EXPECT_NE(stray.err.find("--aig-token-file: an AI Gateway token needs a gateway"),
            std::string::npos)
      << stray.err;

  // clef doctor reaches the gateway whatever the cache holds: a wrong token fails it.
  std::vector<std::string> doctor = {"doctor",
                                     "--backend",
                                     "workers-ai",
                                     "--gateway",
                                     "acc9/support-gw",
                                     "--host",
                                     server.base_url() + "/v1",
                                     "--api-token-file",
                                     write_temp_file("tok-gw4", "test-token\n"),
                                     "--aig-token-file",
                                     gateway_token,
                                     "--cache",
                                     ::testing::TempDir() + "doctor-cache"};
  ASSERT_EQ(run_clef(doctor).code, 0);
  doctor[10] = write_temp_file("tok-aig-wrong", "not-the-gateway-token\n");
  auto wrong = run_clef(doctor);
  EXPECT_NE(wrong.code, 0) << wrong.out;
  EXPECT_NE((wrong.out + wrong.err).find("AI Gateway refused a token"), std::string::npos)
      << wrong.out << wrong.err;
}

// A metadata value is typed only when JSON writes it back as given: the gateway logs what was
// typed.
TEST(CliAsk, GatewayMetadataKeepsWhatWasTyped) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"k=42", "42"},
      {"k=-7", "-7"},
      {"k=0.75", "0.75"},
      {"k=true", "true"},
      {"k=00042", "\"00042\""},
      {"k=+1", "\"+1\""},
      {"k=-0", "\"-0\""},
      {"k=1e-400", "\"1e-400\""},
      {"k=99999999999999999999", "\"99999999999999999999\""},
      {"k=", "\"\""},
      {"k=a=b", "\"a=b\""}};
  for (const auto& [flag, json] : cases) {
    auto parsed = clef::cli::parse_metadata_flag(flag);
    ASSERT_TRUE(parsed.ok()) << flag;
    EXPECT_EQ(parsed->first, "k");
    const std::string sent = std::visit(
        [](const auto& value) { return nlohmann::ordered_json(value).dump(); }, parsed->second);
    EXPECT_EQ(sent, json) << flag;
  }
  EXPECT_FALSE(clef::cli::parse_metadata_flag("=v").ok());
  EXPECT_FALSE(clef::cli::parse_metadata_flag("novalue").ok());
}

// clef doctor through a gateway asks past its cache: a cached answer proves no token.
TEST(CliDoctor, ThroughAGatewayTheCacheCannotHideABadToken) {
  FakeServer server(ServerShape::workers_ai);
  ASSERT_TRUE(server.set_token("test-token"));
  std::vector<std::string> args = {"doctor",
                                   "--backend",
                                   "workers-ai",
                                   "--gateway",
                                   "acc9/default",
                                   "--host",
                                   server.base_url() + "/v1",
                                   "--aig-cache-ttl",
                                   "600",
                                   "--api-token-file",
                                   write_temp_file("tok-doc", "test-token\n")};
  auto good = run_clef(args);
  ASSERT_EQ(good.code, 0) << good.err;
  EXPECT_EQ(server.requests().back().header("cf-aig-skip-cache"), "true");
  args.back() = write_temp_file("tok-doc-bad", "wrong\n");
  auto bad = run_clef(args);
  EXPECT_EQ(bad.code, 3) << bad.out << bad.err;
}

TEST(CliAsk, WorkersHostWithOrWithoutClientV4AndModelTagDropped) {
  FakeServer server(ServerShape::workers_ai);
  const std::string token = write_temp_file("tok3", "test-token\n");
  for (const std::string& host : {server.base_url(), server.base_url() + "/client/v4/"}) {
    auto r =
        run_clef({"ask", "--backend", "workers-ai", "--host", host, "--account-id", "acc9",
                  "--api-token-file", token, "-m", "clef-flash:latest", "x", "--yes-no", "u: U?"});
    EXPECT_EQ(r.code, 0) << host << "\n" << r.err;
  }
  ASSERT_EQ(server.requests().size(), 2u);
  for (const auto& request : server.requests()) {
    EXPECT_EQ(request.path, "/client/v4/accounts/acc9/ai/run/@cf/cloudflare/clef-flash");
    EXPECT_EQ(Json::parse(request.body)["model"], "clef-flash");
  }
  auto tagged =
      run_clef({"ask", "--backend", "workers-ai", "--host", server.base_url(), "--account-id",
                "acc9", "--api-token-file", token, "-m", "clef:27b", "x", "--yes-no", "u: U?"});
  EXPECT_EQ(tagged.code, 2);
  EXPECT_NE(tagged.err.find("Workers AI models have no tags"), std::string::npos) << tagged.err;
}

TEST(CliDoctor, WorkersSendsARealDecisionAndReportsARejectedToken) {
  FakeServer server(ServerShape::workers_ai);
  ASSERT_TRUE(server.set_token("test-token"));  // by default the mock takes any token
  auto good =
      run_clef({"doctor", "--backend", "workers-ai", "--host", server.base_url(), "--account-id",
                "acc9", "--api-token-file", write_temp_file("tok4", "test-token")});
  EXPECT_EQ(good.code, 0) << good.out;
  EXPECT_NE(good.out.find("ok    a test decision succeeded (model clef-flash"), std::string::npos)
      << good.out;
  ASSERT_EQ(server.requests().size(), 1u);
  auto bad =
      run_clef({"doctor", "--backend", "workers-ai", "--host", server.base_url(), "--account-id",
                "acc9", "--api-token-file", write_temp_file("tok5", "wrong"), "-v"});
  EXPECT_EQ(bad.code, 3) << bad.out;
  EXPECT_NE(bad.out.find("FAIL  a test decision to "), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("HTTP 401"), std::string::npos) << bad.out;
  // -v shows each HTTP call on stderr, the token never.
  EXPECT_NE(bad.err.find("clef: > POST " + server.base_url() + "/client/v4/accounts/acc9/"),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("clef: < HTTP 401"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("wrong"), std::string::npos) << bad.err;
}

// The test decision must come back a valid yes/no: a server that answers, but with a refusal or
// a probability of 7, has not shown that the model works (an outside probe found doctor passing).
TEST(CliDoctor, AnAnswerThatIsNotAValidYesNoFailsTheCheck) {
  FakeServer server(ServerShape::openai);
  server.set_models({"luna"});
  const std::string key = write_temp_file("openai-doctor-key", "sk-test\n");
  auto doctor = [&] {
    return run_clef({"doctor", "--backend", "openai", "--host", server.base_url() + "/v1",
                     "--api-token-file", key, "-m", "luna"});
  };
  auto fine = doctor();
  EXPECT_EQ(fine.code, 0) << fine.out;
  EXPECT_NE(fine.out.find("ok    a test decision succeeded (model luna"), std::string::npos)
      << fine.out;
  for (const std::string answer : {R"({"type":"refusal","name":"reachable"})",
                                   R"({"type":"predicate","name":"reachable","probability":7})"}) {
    server.set_script([answer](const auto&, int) {
      return Scripted{200, R"({"model":"luna","answers":[)" + answer +
                               R"(],"usage":{"input_tokens":3,"output_tokens":0}})"};
    });
    auto bad = doctor();
    EXPECT_EQ(bad.code, 4) << bad.out;
    EXPECT_NE(
        bad.out.find("FAIL  a test decision to " + server.base_url() + "/v1/decisions came back "),
        std::string::npos)
        << bad.out;
  }
}

struct ErrorCase {
  std::string name;
  Scripted reply;
  int code;
  std::string fragment;
};

TEST(CliAsk, EveryErrorClassHasItsExitCode) {
  const std::vector<ErrorCase> cases = {
      {"server_500", {500, R"({"error":"llama runner crashed"})"}, 4, "llama runner crashed"},
      {"rejected_400", {400, R"({"error":"invalid question"})"}, 4, "invalid question"},
      {"invalid_json", {200, R"({"answers": )"}, 4, "invalid_response"},
      {"missing_answer",
       {200, R"({"model":"clef-flash","answers":{}})"},
       4,
       "no usable answer for \"u\" (missing)"},
      {"refusal",
       {200, R"({"model":"clef-flash","answers":{"u":{"type":"refusal","message":"no"}}})"},
       4,
       "(refused): no"},
      {"unauthorized", {401, R"({"error":"unauthorized"})"}, 3, "authentication"},
      {"truncated",
       {200,
        R"({"model":"clef-flash","answers":{"u":{"type":"noul","noul":0.5}}})",
        "application/json",
        {},
        {},
        10},
       5,
       "cut short"},
      {"slow", {200, "{}", "application/json", {}, std::chrono::milliseconds(1000)}, 5, "timeout"},
  };
  for (const auto& c : cases) {
    FakeServer server;
    server.set_script([&](const auto&, int) { return c.reply; });
    auto r = run_clef(ask(server, {"x", "--yes-no", "u: U?", "--timeout", "0.3"}));
    EXPECT_EQ(r.code, c.code) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.fragment), std::string::npos) << c.name << ": " << r.err;
  }
  FakeServer server;
  auto model_missing = run_clef(ask(server, {"x", "--yes-no", "u: U?", "--model", "clef"}));
  EXPECT_EQ(model_missing.code, 4);
  EXPECT_NE(model_missing.err.find("ollama pull clef"), std::string::npos);

  auto refused = run_clef({"ask", "x", "--yes-no", "u: U?", "--retries", "0", "--host",
                           "127.0.0.1:" + std::to_string(clef::testing::refusing_port())});
  EXPECT_EQ(refused.code, 5);
  EXPECT_NE(refused.err.find("clef: error: connection_failed"), std::string::npos);
  EXPECT_NE(refused.err.find("`ollama serve`"), std::string::npos);

  EXPECT_EQ(run_clef({"ask", "x", "--no-such-flag"}).code, 2);
  EXPECT_EQ(run_clef({}).code, 2);
  EXPECT_EQ(run_clef({"--help"}).code, 0);
}

TEST(CliHelp, ListsEveryExitCode) {
  // A CI job's author reads `clef --help`, not the man page: every code the table has is there.
  const auto help = run_clef({"--help"});
  ASSERT_EQ(help.code, 0);
  const auto at = help.out.find("Exit codes: ");
  ASSERT_NE(at, std::string::npos) << help.out;
  const std::string line = help.out.substr(at, help.out.find('\n', at) - at);
  for (const auto& exit : clef::cli::exit_code_meanings()) {
    const std::string code = std::to_string(clef::cli::as_int(exit.code));
    EXPECT_NE(line.find(" " + code + " "), std::string::npos) << code << " missing: " << line;
  }
}

TEST(CliAsk, ARefusedCredentialNamesThatBackendsOwn) {
  // Each backend's 401 hint comes from its traits: Ollama takes no token (basic auth in the
  // URL, as behind a proxy), the others name their own variable. Ollama's says whether clef
  // sent any (it said "check the API key" when it had sent none).
  FakeServer server;
  server.set_script([](const auto&, int) { return Scripted{401, R"({"error":"unauthorized"})"}; });
  const std::string token = write_temp_file("token.txt", "t0ken\n");
  struct Case {
    std::vector<std::string> flags;
    std::string hint;
  };
  const std::vector<Case> cases = {
      {{}, "clef sent none: give what the proxy in front of the server wants in its URL"},
      {{"--api-token-file", token},
       "check the user and password in the server's URL (--host), or the token in"},
      {{"--backend", "systemone", "--api-token-file", token}, "set CLEF_API_KEY or use"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = ask(server, {"x", "--yes-no", "u: U?"});
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    auto r = run_clef(args);
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find(c.hint), std::string::npos) << r.err;
  }
  // Ollama takes no API key: its hint used to send the user to CLEF_API_KEY.
  const std::string ollama = run_clef(ask(server, {"x", "--yes-no", "u: U?"})).err;
  EXPECT_EQ(ollama.find("CLEF_API_KEY"), std::string::npos) << ollama;
  EXPECT_EQ(ollama.find("API key"), std::string::npos) << ollama;
  EXPECT_NE(ollama.find("Ollama itself asks for none"), std::string::npos) << ollama;
}

TEST(CliAsk, KeepAliveIsSentAsOllamaExpects) {
  FakeServer server;
  ASSERT_EQ(run_clef(ask(server, {"x", "--yes-no", "u: U?", "--keep-alive", "300"})).code, 0);
  ASSERT_EQ(run_clef(ask(server, {"x", "--yes-no", "u: U?", "--keep-alive", "5m"})).code, 0);
  EXPECT_EQ(Json::parse(server.requests().at(0).body)["keep_alive"], 300);
  EXPECT_EQ(Json::parse(server.requests().at(1).body)["keep_alive"], "5m");
  EXPECT_EQ(run_clef(ask(server, {"x", "--yes-no", "u: U?", "--keep-alive", "soon"})).code, 2);
}

TEST(CliModels, MarksDecisionCapableModels) {
  FakeServer server;
  auto r = run_clef({"models", "--host", server.base_url()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("clef-flash:latest              yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("llama3:latest                  no"), std::string::npos) << r.out;
  auto json = run_clef({"models", "--host", server.base_url(), "--json"});
  EXPECT_EQ(Json::parse(json.out)[1]["decision"], false);
}

TEST(CliDoctor, SaysExactlyWhatToFix) {
  FakeServer server;
  auto ok = run_clef({"doctor", "--host", server.base_url()});
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("ok    model clef-flash is pulled and decision-capable"), std::string::npos)
      << ok.out;

  auto missing = run_clef({"doctor", "--host", server.base_url(), "--model", "clef"});
  EXPECT_EQ(missing.code, 4);
  EXPECT_NE(missing.out.find("fix: run `ollama pull clef`"), std::string::npos) << missing.out;

  auto llama = run_clef({"doctor", "--host", server.base_url(), "--model", "llama3"});
  EXPECT_EQ(llama.code, 4);
  EXPECT_NE(llama.out.find("not a decision model"), std::string::npos) << llama.out;

  server.set_version("0.34.0");
  auto old = run_clef({"doctor", "--host", server.base_url()});
  EXPECT_EQ(old.code, 4);
  EXPECT_NE(old.out.find("upgrade Ollama to 0.35.1"), std::string::npos);
  // A version clef cannot read is said so, not taken for an old one (and shown short).
  server.set_version("banana" + std::string(1000, 'x'));
  auto unreadable = run_clef({"doctor", "--host", server.base_url()});
  EXPECT_EQ(unreadable.code, 4);
  EXPECT_NE(unreadable.out.find("is not one clef can read"), std::string::npos) << unreadable.out;
  EXPECT_EQ(unreadable.out.find("upgrade"), std::string::npos) << unreadable.out;
  EXPECT_LT(unreadable.out.size(), 600u) << unreadable.out;

  auto down =
      run_clef({"doctor", "--host", "127.0.0.1:" + std::to_string(clef::testing::refusing_port())});
  EXPECT_EQ(down.code, 5);
  EXPECT_NE(down.out.find("`ollama serve`"), std::string::npos);

  unsetenv("CLOUDFLARE_API_TOKEN");
  unsetenv("CLOUDFLARE_ACCOUNT_ID");
  auto workers = run_clef({"doctor", "--backend", "workers-ai"});
  EXPECT_EQ(workers.code, 3);
  EXPECT_NE(workers.out.find("export CLOUDFLARE_API_TOKEN"), std::string::npos);
  EXPECT_NE(workers.out.find("export CLOUDFLARE_ACCOUNT_ID"), std::string::npos);
}

TEST(CliDoctor, FlagsAnMlxTagAndAskSaysToUseTheDefaultTag) {
  // Issue 16: Ollama refuses MLX and Safetensors builds on /v1/systemone with 400.
  FakeServer server;
  server.set_models({"clef-flash", "clef-flash:latest", "clef-flash:mlx-q4"});
  auto doctor = run_clef({"doctor", "--host", server.base_url(), "-m", "clef-flash:mlx-q4"});
  EXPECT_EQ(doctor.code, 4) << doctor.out;
  EXPECT_NE(doctor.out.find("FAIL  model clef-flash:mlx-q4 is an MLX or Safetensors build"),
            std::string::npos)
      << doctor.out;
  EXPECT_NE(doctor.out.find("use the default tag"), std::string::npos) << doctor.out;
  auto ask = run_clef(
      {"ask", "x", "--yes-no", "u: U?", "--host", server.base_url(), "-m", "clef-flash:mlx-q4"});
  EXPECT_EQ(ask.code, 4) << ask.err;
  EXPECT_NE(ask.err.find("use the default tag"), std::string::npos) << ask.err;
  auto fine = run_clef({"doctor", "--host", server.base_url(), "-m", "clef-flash"});
  EXPECT_EQ(fine.code, 0) << fine.out;
}

TEST(CliProcess, SigintWhileWaitingExits130) {
  FakeServer server;
  server.set_script([](const auto&, int) {
    return Scripted{200, "{}", "application/json", {}, std::chrono::milliseconds(5000)};
  });
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int null_fd = ::open("/dev/null", O_RDWR);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    execl(CLEF_EXE, CLEF_EXE, "ask", "x", "--yes-no", "u: U?", "--host", server.base_url().c_str(),
          nullptr);
    _exit(127);
  }
  // The request has arrived: clef installed its handlers (first thing in main) long before.
  if (!clef::testing::wait_until([&] { return server.request_count() >= 1; },
                                 "clef ask's request")) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return;
  }
  kill(child, SIGINT);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
}

TEST(CliUsage, ClefAlonePrintsTheCommandsAsAUsageError) {
  auto r = run_clef({});
  EXPECT_EQ(r.code, 2);
  for (const char* command : {"ask", "batch", "models", "doctor"})
    EXPECT_NE(r.err.find(command), std::string::npos) << r.err;
}

}  // namespace

namespace {

TEST(CliVersion, NamesClefLibcurlAndTheTlsLibraryLoaded) {
  auto r = clef::testing::run_clef({"--version"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("clef ") + clef::version + "\n" + clef::transport_version() + "\n");
  // The libcurl loaded now (a version number), and the TLS library it was built with.
  EXPECT_EQ(r.out.find("\nlibcurl "), std::string(clef::version).size() + 5) << r.out;
  EXPECT_NE(r.out.find(", TLS: OpenSSL/"), std::string::npos) << r.out;
}

}  // namespace

// --audio and --video: recognised by their bytes, sent as clef-omni's lower-case data URLs,
// refused (exit 2, before sending) for a model without them, and a note when only some videos
// carry sound.
TEST(CliAsk, AudioAndVideoReachClefOmniAndNoOtherModel) {
  FakeServer server(ServerShape::workers_ai);
  server.set_models({"clef-flash", "clef-omni"});
  const std::string media = std::string(CLEF_TEST_DATA) + "/media/";
  const std::string token = write_temp_file("tok-omni", "test-token\n");
  auto ask = [&](const std::string& model, std::vector<std::string> attachments) {
    std::vector<std::string> args = {
        "ask",          "--backend", "workers-ai",       "--host", server.base_url() + "/client/v4",
        "--account-id", "acc9",      "--api-token-file", token,    "-m",
        model,          "--yes-no",  "r: Refund?",       "--json", "Caller on hold"};
    args.insert(args.end(), attachments.begin(), attachments.end());
    return run_clef(args);
  };
  auto answered = ask("@cf/cloudflare/clef-omni",
                      {"--audio", media + "tone-2s.opus", "--video", media + "clip-1s.mp4",
                       "--video", media + "clip-1s-silent.mp4"});
  ASSERT_EQ(answered.code, 0) << answered.err;
  EXPECT_NE(answered.err.find("clef: note: videos[1] has no soundtrack"), std::string::npos)
      << answered.err;
  ASSERT_EQ(server.requests().size(), 1u);
  const Json body = Json::parse(server.requests().at(0).body);
  EXPECT_EQ(body["model"], "clef-omni");
  EXPECT_EQ(body["audio"].size(), 1u);
  EXPECT_EQ(body["audio"][0].get<std::string>().rfind("data:audio/ogg;base64,T2dnUw", 0), 0u);
  EXPECT_EQ(body["videos"].size(), 2u);

  auto flash = ask("@cf/cloudflare/clef-flash", {"--audio", media + "tone-2s.wav"});
  EXPECT_EQ(flash.code, 2) << flash.err;
  EXPECT_NE(flash.err.find("takes no audio or video: only clef-omni"), std::string::npos)
      << flash.err;
  auto swapped = ask("@cf/cloudflare/clef-omni", {"--video", media + "tone-2s.wav"});
  EXPECT_EQ(swapped.code, 2);
  EXPECT_NE(swapped.err.find("this is WAV audio, not a video"), std::string::npos) << swapped.err;
  EXPECT_NE(swapped.err.find("tone-2s.wav"), std::string::npos) << swapped.err;
  EXPECT_EQ(server.requests().size(), 1u) << "a refused request reached the server";
}
