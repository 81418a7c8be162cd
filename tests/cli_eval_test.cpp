// clef eval against a local server whose answers are scripted by rules, so every number in the
// report can be worked out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "clef/metrics.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::AnswerRule;
using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::write_temp_file;
using Json = nlohmann::json;

AnswerRule rule(std::string model, std::string question, std::string match, std::string answer,
                double probability) {
  return {std::move(model), std::move(question), clef::MockPattern(match), std::move(answer),
          probability};
}

const char* const questions_json = R"({
  "team": {"type": "choice", "instructions": "Which team?",
           "criteria": {"billing": "Money", "technical": "Bugs"}},
  "refund": {"type": "noul", "instructions": "Asks for money back?"}
})";

/// Ten tickets: five about money (billing), five about bugs (technical); refund gold "yes" on
/// the first three. T10's team gold is empty (skipped).
std::string ten_tickets() {
  std::string out;
  for (int i = 1; i <= 10; ++i) {
    const bool money = i <= 5;
    Json line = {{"id", "T" + std::to_string(i)},
                 {"state", std::string(money ? "money" : "bug") + " ticket " + std::to_string(i)},
                 {"team", i == 10 ? "" : (money ? "billing" : "technical")},
                 {"refund", i <= 3 ? "yes" : "no"}};
    out += line.dump() + "\n";
  }
  return out;
}

/// Model "m": "money" → billing 0.8 except ticket 5 (technical 0.6); "bug" → technical 0.8
/// except ticket 9 (billing 0.7). Refund: yes 0.9 on tickets 1 and 2, no 0.7 elsewhere.
void script_model_m(FakeServer& server, const std::string& model = "m") {
  server.set_models({model, "other"});
  server.set_rules(
      {rule(model, "team", "ticket 5$", "technical", 0.6),
       rule(model, "team", "ticket 9$", "billing", 0.7),
       rule(model, "team", "money", "billing", 0.8), rule(model, "team", "bug", "technical", 0.8),
       rule(model, "refund", "ticket [12]$", "yes", 0.9), rule(model, "refund", ".", "no", 0.7),
       // "other" gets every team question right at 0.9, refund always "no".
       rule("other", "team", "money", "billing", 0.9),
       rule("other", "team", "bug", "technical", 0.9), rule("other", "refund", ".", "no", 0.9)});
}

/// This test's own name, so tests running at once (ctest -j) never share a file.
std::string test_name() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

struct EvalFiles {
  std::string data = write_temp_file("eval_data_" + test_name() + ".jsonl", ten_tickets());
  std::string questions =
      write_temp_file("eval_questions_" + test_name() + ".json", questions_json);
};

std::vector<std::string> eval_args(const FakeServer& server, const EvalFiles& files,
                                   std::vector<std::string> extra) {
  std::vector<std::string> args = {"eval",    files.data,       "-q",      files.questions,
                                   "--label", "team=team",      "--label", "refund=refund",
                                   "--host",  server.base_url()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

Json report_at(const std::string& path) {
  return Json::parse(read_file(path));
}

void expect_interval(const Json& value, const clef::metrics::Interval& expected) {
  EXPECT_DOUBLE_EQ(value["value"].get<double>(), expected.value);
  EXPECT_DOUBLE_EQ(value["low"].get<double>(), expected.low);
  EXPECT_DOUBLE_EQ(value["high"].get<double>(), expected.high);
}

TEST(CliEval, ScoresScriptedAnswersAsWorkedOutByHand) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string out = fresh_path("eval_report.json");
  auto r = run_clef(eval_args(server, files, {"-m", "m", "--report-json", out}));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json report = report_at(out);
  EXPECT_EQ(report["schema"], "clef-eval/1");
  EXPECT_EQ(report["items"], 10);
  const Json& team = report["models"]["m"]["questions"]["team"];
  // Nine with gold: T5 and T9 wrong, the other seven right.
  EXPECT_EQ(team["n"], 9);
  EXPECT_EQ(team["skipped"], 1);
  expect_interval(team["accuracy"], clef::metrics::wilson(7, 9));
  expect_interval(team["coverage"], clef::metrics::wilson(9, 9));
  EXPECT_EQ(team["confusion"]["billing"]["billing"], 4);
  EXPECT_EQ(team["confusion"]["billing"]["technical"], 1);
  EXPECT_EQ(team["confusion"]["technical"]["technical"], 3);
  EXPECT_EQ(team["confusion"]["technical"]["billing"], 1);
  // billing: predicted 5 (T1-4, T9), 4 right; support 5 (T1-5).
  expect_interval(team["classes"]["billing"]["precision"], clef::metrics::wilson(4, 5));
  expect_interval(team["classes"]["billing"]["recall"], clef::metrics::wilson(4, 5));
  // Brier, two options: right at 0.8 → 0.08 (six items: T1-4, T6-7; T8 too), T5 wrong at 0.6 →
  // 0.72, T9 wrong at 0.7 → 0.98. Right items: T1-4, T6, T7, T8 = 7 × 0.08.
  EXPECT_NEAR(team["brier"]["value"].get<double>(), (7 * 0.08 + 0.72 + 0.98) / 9, 1e-12);
  // Log loss: −ln p(gold): 7 × −ln 0.8, −ln 0.4, −ln 0.3.
  EXPECT_NEAR(team["log_loss"]["value"].get<double>(),
              (-7 * std::log(0.8) - std::log(0.4) - std::log(0.3)) / 9, 1e-12);
  const Json& refund = report["models"]["m"]["questions"]["refund"];
  // Refund: T1, T2 yes right; T3 gold yes, predicted no (P(true) 0.3); the rest no right.
  expect_interval(refund["accuracy"], clef::metrics::wilson(9, 10));
  expect_interval(refund["precision"], clef::metrics::wilson(2, 2));
  expect_interval(refund["recall"], clef::metrics::wilson(2, 3));
  // AUROC: positives score 0.9, 0.9, 0.3; negatives all 0.3 → (2·7 + 0.5·7) / 21.
  EXPECT_NEAR(refund["auroc"].get<double>(), (2 * 7 + 0.5 * 7) / 21.0, 1e-12);
  EXPECT_EQ(report["models"]["m"]["latency_ms"]["n"], 10);
  EXPECT_EQ(server.request_count(), 10);
  // The terminal table names the question, its accuracy and a bar per label.
  EXPECT_NE(r.out.find("team (choice)  n 9  coverage 100.0%  accuracy 77.8%"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("billing    ████████████████░░░░ F1 0.80"), std::string::npos) << r.out;
}

TEST(CliEval, AnswersAreKeptAndRescoredWithoutSendingAgain) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string answers = fresh_path("eval_answers.jsonl");
  const std::string first = fresh_path("eval_first.json"), second = fresh_path("eval_second.json");
  ASSERT_EQ(
      run_clef(eval_args(server, files, {"-m", "m", "--answers", answers, "--report-json", first}))
          .code,
      0);
  EXPECT_EQ(server.request_count(), 10);
  auto again = run_clef(
      eval_args(server, files, {"-m", "m", "--answers", answers, "--report-json", second}));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(server.request_count(), 10) << "the second call re-scored the kept answers";
  EXPECT_EQ(read_file(first), read_file(second)) << "same input, same bytes";
  // --from-results scores the same file with no server at all.
  const std::string third = fresh_path("eval_third.json");
  auto offline = run_clef(
      {"eval", files.data, "-q", files.questions, "--label", "team=team", "--label",
       "refund=refund", "--from-results", answers, "-m", "m", "--host",
       "http://127.0.0.1:" + std::to_string(clef::testing::unused_port()), "--report-json", third});
  ASSERT_EQ(offline.code, 0) << offline.err;
  EXPECT_EQ(read_file(first), read_file(third));
  // Answers of another run (here: another server) are never mixed in.
  FakeServer elsewhere;
  script_model_m(elsewhere);
  auto mixed = run_clef(eval_args(elsewhere, files, {"-m", "m", "--answers", answers}));
  EXPECT_EQ(mixed.code, 2);
  EXPECT_NE(mixed.err.find("holds the answers of another run"), std::string::npos) << mixed.err;
  EXPECT_EQ(elsewhere.request_count(), 0);
}

TEST(CliEval, TwoModelsArePairedItemByItem) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string out = fresh_path("eval_two.json");
  fresh_path("eval_two_answers.m.jsonl");  // the per-model answer files of an earlier run
  fresh_path("eval_two_answers.other.jsonl");
  auto r = run_clef(eval_args(server, files,
                              {"-m", "m", "-m", "other", "--report-json", out, "--answers",
                               fresh_path("eval_two_answers.jsonl")}));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json report = report_at(out);
  ASSERT_EQ(report["comparison"].size(), 1u);
  const Json& c = report["comparison"][0];
  EXPECT_EQ(c["a"], "m");
  EXPECT_EQ(c["b"], "other");
  const Json& team = c["questions"]["team"];
  // "other" gets all nine right; m misses T5 and T9.
  EXPECT_EQ(team["only_a_right"], 0);
  EXPECT_EQ(team["only_b_right"], 2);
  EXPECT_DOUBLE_EQ(team["mcnemar_p"].get<double>(), clef::metrics::mcnemar_exact_p(0, 2));
  EXPECT_NEAR(team["accuracy_difference"]["value"].get<double>(), 7.0 / 9 - 1.0, 1e-12);
  expect_interval(team["flip_rate"], clef::metrics::wilson(2, 9));
  // Refund: m is right on T1, T2 where other says no; other is never right where m is wrong.
  EXPECT_EQ(c["questions"]["refund"]["only_a_right"], 2);
  EXPECT_EQ(c["questions"]["refund"]["only_b_right"], 0);
  EXPECT_NE(r.out.find("m vs other"), std::string::npos) << r.out;
}

TEST(CliEval, RequirementsGateTheExitCode) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string answers = fresh_path("eval_gate_answers.jsonl");
  auto run = [&](std::vector<std::string> requirements) {
    std::vector<std::string> extra = {"-m", "m", "--answers", answers};
    for (auto& r : requirements) {
      extra.push_back("--require");
      extra.push_back(r);
    }
    return run_clef(eval_args(server, files, extra));
  };
  auto pass = run({"team.accuracy >= 0.7", "lower(refund.precision[yes]) > 0.3",
                   "refund.auroc >= 0.8", "upper(team.brier) < 1"});
  EXPECT_EQ(pass.code, 0) << pass.err;
  EXPECT_NE(pass.err.find("every requirement holds"), std::string::npos);
  auto fail = run(
      {"team.accuracy >= 0.9", "lower(team.precision[billing]) >= 0.95", "team.accuracy >= 0.5"});
  EXPECT_EQ(fail.code, 1);
  EXPECT_NE(fail.err.find("requirement failed: m: team.accuracy >= 0.9 (it is 0.7778)"),
            std::string::npos)
      << fail.err;
  EXPECT_NE(fail.err.find("m: lower(team.precision[billing]) >= 0.95 (it is 0.3"),
            std::string::npos)
      << fail.err;
  EXPECT_EQ(fail.err.find("team.accuracy >= 0.5"), std::string::npos) << "it holds";
  for (const char* malformed :
       {"team.accuracy", "team.accuracy >= high", "lower(team.macro_f1) > 0", "team.auroc > 0.5",
        "nosuch.accuracy > 0", "team.precision[nosuch] > 0"}) {
    auto r = run({malformed});
    EXPECT_EQ(r.code, 2) << malformed << ": " << r.err;
    EXPECT_NE(r.err.find("malformed requirement"), std::string::npos) << r.err;
  }
}

TEST(CliEval, BaselineFailsOnADropAndRefusesOtherData) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  // The baseline: "m" as "other" answers (all of team right), scored under the name m.
  const std::string other_answers = fresh_path("eval_base_other.jsonl");
  ASSERT_EQ(run_clef(eval_args(server, files, {"-m", "other", "--answers", other_answers})).code,
            0);
  const std::string baseline = fresh_path("eval_baseline.json");
  auto base = run_clef({"eval", files.data, "-q", files.questions, "--label", "team=team",
                        "--label", "refund=refund", "--from-results", other_answers, "-m", "m",
                        "--report-json", baseline});
  ASSERT_EQ(base.code, 0) << base.err;
  const std::string answers = fresh_path("eval_base_m.jsonl");
  auto worse =
      run_clef(eval_args(server, files, {"-m", "m", "--answers", answers, "--baseline", baseline}));
  EXPECT_EQ(worse.code, 1) << worse.err;
  EXPECT_NE(worse.err.find("worse than the baseline: m: team.accuracy went from 1 to 0.7778 "
                           "(tolerance 0)"),
            std::string::npos)
      << worse.err;
  auto tolerated = run_clef(
      eval_args(server, files,
                {"-m", "m", "--answers", answers, "--baseline", baseline, "--tolerance", "1"}));
  EXPECT_EQ(tolerated.code, 0) << tolerated.err;
  // Same report as its own baseline holds.
  const std::string own = fresh_path("eval_own.json");
  ASSERT_EQ(
      run_clef(eval_args(server, files, {"-m", "m", "--answers", answers, "--report-json", own}))
          .code,
      0);
  EXPECT_EQ(
      run_clef(eval_args(server, files, {"-m", "m", "--answers", answers, "--baseline", own})).code,
      0);
  // Other data: one ticket fewer.
  std::string fewer = ten_tickets();
  fewer = fewer.substr(0, fewer.rfind('\n', fewer.size() - 2) + 1);
  const std::string other_data = write_temp_file("eval_fewer.jsonl", fewer);
  auto refused =
      run_clef({"eval", other_data, "-q", files.questions, "--label", "team=team", "--label",
                "refund=refund", "--host", server.base_url(), "-m", "m", "--baseline", baseline});
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("other data (its dataset_sha256 differs)"), std::string::npos)
      << refused.err;
  auto bad_tolerance = run_clef(eval_args(
      server, files,
      {"-m", "m", "--answers", answers, "--baseline", baseline, "--tolerance", "speed=1"}));
  EXPECT_EQ(bad_tolerance.code, 2);
}

TEST(CliEval, BrokenDataIsRefusedNamingLineAndField) {
  FakeServer server;
  script_model_m(server);
  const std::string questions = write_temp_file("eval_q_bad.json", questions_json);
  auto eval = [&](const std::string& data, std::vector<std::string> labels) {
    std::vector<std::string> args = {"eval", data, "-q", questions, "--host", server.base_url(),
                                     "-m",   "m"};
    for (auto& l : labels) {
      args.push_back("--label");
      args.push_back(l);
    }
    return run_clef(args);
  };
  auto bad_gold =
      eval(write_temp_file("eval_bad_gold.jsonl", R"({"id": "a", "state": "x", "team": "billing"})"
                                                  "\n"
                                                  R"({"id": "b", "state": "y", "team": "biling"})"
                                                  "\n"),
           {"team=team"});
  EXPECT_EQ(bad_gold.code, 2);
  EXPECT_NE(bad_gold.err.find("\"biling\" is not an answer of team"), std::string::npos)
      << bad_gold.err;
  EXPECT_NE(bad_gold.err.find("line 2, team"), std::string::npos) << bad_gold.err;
  auto twice =
      eval(write_temp_file("eval_twice.jsonl", R"({"id": "a", "state": "x", "team": "billing"})"
                                               "\n"
                                               R"({"id": "a", "state": "y", "team": "billing"})"
                                               "\n"),
           {"team=team"});
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("used twice"), std::string::npos) << twice.err;
  auto no_column = eval(write_temp_file("eval_cols.csv", "id,state\na,x\n"), {"team=team"});
  EXPECT_EQ(no_column.code, 2);
  EXPECT_NE(no_column.err.find("no \"team\" column (--label)"), std::string::npos) << no_column.err;
  auto not_question = eval(write_temp_file("eval_nq.jsonl", R"({"id": "a", "state": "x"})"
                                                            "\n"),
                           {"urgency=team"});
  EXPECT_EQ(not_question.code, 2);
  EXPECT_NE(not_question.err.find("\"urgency\" is not one of the questions"), std::string::npos);
  EXPECT_EQ(server.request_count(), 0) << "nothing is sent for a broken dataset";
  // CSV data reads its gold from columns.
  auto csv = eval(write_temp_file("eval_ok.csv",
                                  "id,state,team\na,money ticket 1,billing\n"
                                  "b,bug ticket 6,technical\n"),
                  {"team=team"});
  EXPECT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("accuracy 100.0%"), std::string::npos) << csv.out;
}

TEST(CliEval, FailedItemsCountAsWrongNotAsMissingData) {
  FakeServer server;
  script_model_m(server);
  server.set_script([](const clef::testing::RecordedRequest& request, int) {
    if (request.body.find("ticket 1\"") == std::string::npos)
      return std::optional<clef::testing::Scripted>();
    return std::optional<clef::testing::Scripted>(
        clef::testing::Scripted{400, R"({"error":"no"})"});
  });
  EvalFiles files;
  const std::string out = fresh_path("eval_failed.json");
  auto r = run_clef(eval_args(server, files, {"-m", "m", "--report-json", out}));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json team = report_at(out)["models"]["m"]["questions"]["team"];
  expect_interval(team["coverage"], clef::metrics::wilson(8, 9));
  expect_interval(team["accuracy"], clef::metrics::wilson(6, 9));
  expect_interval(team["accuracy_answered"], clef::metrics::wilson(6, 8));
  EXPECT_EQ(team["confusion"]["billing"]["(no answer)"], 1);
  EXPECT_EQ(report_at(out)["models"]["m"]["requests"]["failed"], 1);
}

TEST(CliEval, FittedPolicyMakesAskAndBatchAbstain) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string policy = fresh_path("eval_policy.json");
  auto fit = run_clef(eval_args(
      server, files,
      {"-m", "m", "--fit-thresholds", "--target-precision", "0.5", "--policy-out", policy}));
  ASSERT_EQ(fit.code, 0) << fit.err;
  const Json written = Json::parse(read_file(policy));
  EXPECT_EQ(written["schema"], "clef-policy/1");
  EXPECT_EQ(written["model"], "m");
  ASSERT_TRUE(written["questions"]["team"]["threshold"].is_number()) << written.dump();
  // Lift the team threshold to 0.75: ask's 0.8 answers pass, 0.6 and 0.7 abstain.
  Json strict = written;
  strict["questions"]["team"]["threshold"] = 0.75;
  strict["questions"]["team"].erase("labels");
  strict["questions"].erase("refund");
  const std::string strict_path = write_temp_file("eval_policy_strict.json", strict.dump());
  auto ask = [&](const std::string& state) {
    return run_clef({"ask", "-q", files.questions, "--host", server.base_url(), "-m", "m",
                     "--policy", strict_path, "--json", state});
  };
  auto confident = ask("money ticket 1");
  EXPECT_EQ(confident.code, 0) << confident.err;
  auto unsure = ask("money ticket 5");
  EXPECT_EQ(unsure.code, 8) << unsure.err;
  const auto json = Json::parse(unsure.out);
  EXPECT_EQ(json["answers"]["team"]["status"], "abstained");
  EXPECT_EQ(json["answers"]["team"]["winner"], "technical");
  EXPECT_DOUBLE_EQ(json["answers"]["team"]["threshold"].get<double>(), 0.75);
  EXPECT_NE(unsure.err.find("abstained: team"), std::string::npos) << unsure.err;
  // batch: the abstained answer is written with its status, and the run is not a failure.
  const std::string out = fresh_path("eval_policy_batch.jsonl");
  auto batch = run_clef({"batch", files.data, "-o", out, "-q", files.questions, "--host",
                         server.base_url(), "-m", "m", "--policy", strict_path});
  EXPECT_EQ(batch.code, 0) << batch.err;
  int abstained = 0;
  for (const auto& line : lines_of(read_file(out)))
    abstained += line["answers"]["team"]["status"] == "abstained";
  EXPECT_EQ(abstained, 2);  // T5 at 0.6 and T9 at 0.7
  // A policy for another model, or for other questions, is refused.
  auto other_model = run_clef({"ask", "-q", files.questions, "--host", server.base_url(), "-m",
                               "other", "--policy", strict_path, "money"});
  EXPECT_EQ(other_model.code, 2);
  EXPECT_NE(other_model.err.find("fitted for model \"m\""), std::string::npos) << other_model.err;
  auto other_questions = run_clef({"ask", "--yes-no", "refund: Money back?", "--host",
                                   server.base_url(), "-m", "m", "--policy", strict_path, "money"});
  EXPECT_EQ(other_questions.code, 2);
  EXPECT_NE(other_questions.err.find("other questions"), std::string::npos);
}

TEST(CliEval, HtmlAndMarkdownReportsAreSelfContained) {
  FakeServer server;
  script_model_m(server);
  // A label with markup in it must come out as text.
  const std::string questions = write_temp_file(
      "eval_q_html.json",
      R"({"team": {"type": "choice", "instructions": "Which?", "criteria": {"<b>billing</b>": "Money", "technical": "Bugs"}}})");
  const std::string data = write_temp_file(
      "eval_html.jsonl", R"({"id": 1, "state": "money ticket 1", "team": "<b>billing</b>"})"
                         "\n"
                         R"({"id": 2, "state": "bug ticket 6", "team": "technical"})"
                         "\n");
  server.set_rules({rule("m", "team", "money", "<b>billing</b>", 0.8),
                    rule("m", "team", "bug", "technical", 0.9)});
  const std::string html = fresh_path("eval_report.html"), md = fresh_path("eval_report.md");
  auto r = run_clef({"eval", data, "-q", questions, "--label", "team=team", "--host",
                     server.base_url(), "-m", "m", "--report-html", html, "--report-md", md});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = read_file(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("http"), std::string::npos) << "no network: nothing to fetch";
  EXPECT_EQ(page.find("<b>billing"), std::string::npos) << "labels are escaped";
  EXPECT_NE(page.find("&lt;b&gt;billing&lt;/b&gt;"), std::string::npos);
  for (const char* chart : {"F1 per label", "Confusion matrix", "Reliability diagram"})
    EXPECT_NE(page.find(std::string("aria-label=\"") + chart + "\""), std::string::npos) << chart;
  const std::string markdown = read_file(md);
  EXPECT_NE(markdown.find("| m | team | choice | 2 | 100.0% | 100.0% ["), std::string::npos)
      << markdown;
}

TEST(CliEval, ContradictoryFlagsAreRefused) {
  EvalFiles files;
  auto base = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"eval",          files.data, "-q",
                                     files.questions, "--label",  "team=team"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(args);
  };
  EXPECT_EQ(base({"--policy-out", "p.json"}).code, 2);
  EXPECT_EQ(base({"--fit-thresholds", "--policy-out", "p.json", "-m", "a", "-m", "b"}).code, 2);
  EXPECT_EQ(base({"--answers", "a.jsonl", "--from-results", "b.jsonl"}).code, 2);
  EXPECT_EQ(base({"--from-results", "a.jsonl", "--from-results", "b.jsonl", "-m", "a"}).code, 2);
  EXPECT_EQ(base({"-m", "a", "-m", "a"}).code, 2);
  EXPECT_EQ(run_clef({"eval", "-", "-q", files.questions, "--label", "team=team"}).code, 2);
  EXPECT_EQ(base({"--label", "team"}).code, 2);
}

}  // namespace

namespace {

TEST(CliEval, ResultsFilesAreReadAsHostileInput) {
  EvalFiles files;
  const std::string report = fresh_path("eval_hostile.json");
  auto score = [&](const std::string& results) {
    return run_clef({"eval", files.data, "-q", files.questions, "--label", "team=team",
                     "--from-results", write_temp_file("eval_hostile_results.jsonl", results), "-m",
                     "m", "--report-json", report});
  };
  auto garbage = score("{\"id\": \"T1\", \"answers\": {}}\nnot json\n");
  EXPECT_EQ(garbage.code, 2);
  EXPECT_NE(garbage.err.find("line 2"), std::string::npos) << garbage.err;
  // An answer that does not fit its question is not an answer: T1 counts as wrong, not as right.
  auto odd = score(
      R"({"id": "T1", "answers": {"team": {"type": "choice", "status": "ok", "probabilities": {"billing": 7}}}})"
      "\n"
      R"({"id": "T2", "answers": {"team": {"type": "noul", "status": "ok", "p_true": 0.9}}})"
      "\n"
      R"({"id": "T3", "answers": {"team": {"type": "choice", "status": "ok", "probabilities": {"billing": 0.9, "technical": 0.1}}}})"
      "\n"
      R"({"id": [1], "answers": {}})"
      "\n"
      R"({"id": "T4", "answers": {"team": "billing"}, "usage": {"input_tokens": "many"}})"
      "\n");
  ASSERT_EQ(odd.code, 0) << odd.err;
  const Json team = Json::parse(read_file(report))["models"]["m"]["questions"]["team"];
  EXPECT_EQ(team["answered"], 1);  // only T3
  EXPECT_DOUBLE_EQ(team["accuracy"]["value"].get<double>(), 1.0 / 9);
}

}  // namespace
