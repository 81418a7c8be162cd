// clef eval against a local server whose answers are scripted by rules, so every number in the
// report can be worked out by hand.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "batch/batch_results.hpp"
#include "child_clef.hpp"
#include "clef/eval_gates.hpp"
#include "clef/metrics.hpp"
#include "cli_runner.hpp"
#include "fake_server.hpp"
#include "wait_until.hpp"

namespace {

using clef::testing::AnswerRule;
using clef::testing::FakeServer;
using clef::testing::fresh_path;
using clef::testing::lines_of;
using clef::testing::read_file;
using clef::testing::run_clef;
using clef::testing::spawn_clef;
using clef::testing::wait_for_exit;
using clef::testing::wait_until;
using clef::testing::write_temp_file;
using Json = nlohmann::json;

AnswerRule rule(std::string model, std::string question, std::string match, std::string answer,
                double probability) {
  return {std::move(model), std::move(question), clef::MockPattern::compile(match).value(),
          std::move(answer), probability};
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
  ASSERT_TRUE(value.is_object()) << value.dump();
  EXPECT_DOUBLE_EQ(value["value"].get<double>(), expected.value);
  EXPECT_DOUBLE_EQ(value["low"].get<double>(), expected.low);
  EXPECT_DOUBLE_EQ(value["high"].get<double>(), expected.high);
}

void expect_interval(const Json& value, const std::optional<clef::metrics::Interval>& expected) {
  ASSERT_TRUE(expected.has_value());
  expect_interval(value, *expected);
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

TEST(CliEval, SeveralHostsScoreTheSameAsOne) {
  FakeServer one, two;
  script_model_m(one);
  script_model_m(two);
  EvalFiles files;
  const std::string single = fresh_path("eval_single.json");
  const std::string fleet = fresh_path("eval_fleet.json");
  ASSERT_EQ(run_clef(eval_args(one, files, {"-m", "m", "--report-json", single})).code, 0);
  const int sent_before = one.request_count();
  auto r = run_clef(
      eval_args(one, files, {"-m", "m", "--host", two.base_url(), "--report-json", fleet}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(one.request_count() - sent_before + two.request_count(), 10);
  EXPECT_GT(two.request_count(), 0) << "the second host took a share";
  Json a = report_at(single), b = report_at(fleet);
  // Everything but the latencies and the run's own settings is the same.
  for (Json* report : {&a, &b}) {
    for (auto& [name, model] : (*report)["models"].items()) model.erase("latency_ms");
    report->erase("created");
    report->erase("run");
  }
  EXPECT_EQ(a["models"], b["models"]);
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
  auto offline =
      run_clef({"eval", files.data, "-q", files.questions, "--label", "team=team", "--label",
                "refund=refund", "--from-results", answers, "-m", "m", "--host",
                "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port()),
                "--report-json", third});
  ASSERT_EQ(offline.code, 0) << offline.err;
  EXPECT_EQ(read_file(first), read_file(third));
  // Answers of another run (here: another server) are never mixed in.
  FakeServer elsewhere;
  script_model_m(elsewhere);
  auto mixed = run_clef(eval_args(elsewhere, files, {"-m", "m", "--answers", answers}));
  EXPECT_EQ(mixed.code, 2);
  EXPECT_NE(mixed.err.find("holds the answers of another run"), std::string::npos) << mixed.err;
  // clef eval has no -o, --overwrite or --force-resume: its advice names what it has.
  EXPECT_EQ(mixed.err.find("--force-resume"), std::string::npos) << mixed.err;
  EXPECT_EQ(mixed.err.find("--overwrite"), std::string::npos) << mixed.err;
  EXPECT_EQ(elsewhere.request_count(), 0);
}

TEST(CliEval, WithoutAnswersNothingIsWrittenNotEvenAScratchFile) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  // No temporary directory to write in: the results stay in memory, typed, as they arrive.
  const char* saved = std::getenv("TMPDIR");
  const std::string kept = saved ? saved : "";
  ::setenv("TMPDIR", "/nonexistent/clef-eval-test", 1);
  const std::string in_memory = fresh_path("eval_in_memory.json");
  auto run = run_clef(eval_args(server, files, {"-m", "m", "--report-json", in_memory}));
  if (saved)
    ::setenv("TMPDIR", kept.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(server.request_count(), 10);
  // The same report as when the results go through an --answers file.
  const std::string answers = fresh_path("eval_memory_answers.jsonl");
  const std::string through_file = fresh_path("eval_through_file.json");
  ASSERT_EQ(run_clef(eval_args(server, files,
                               {"-m", "m", "--answers", answers, "--report-json", through_file}))
                .code,
            0);
  const Json a = report_at(in_memory), b = report_at(through_file);
  // Latency differs from run to run; everything else is the same.
  Json a_rest = a, b_rest = b;
  a_rest["models"]["m"].erase("latency_ms");
  b_rest["models"]["m"].erase("latency_ms");
  EXPECT_EQ(a_rest, b_rest);
  EXPECT_EQ(a["models"]["m"]["latency_ms"]["n"], 10);
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

// Two models priced differently on the same tickets: each model's cost beside its accuracy —
// in all, per 1,000 decisions, per item all right — in the JSON, the text, the HTML chart (one
// point per model), and gated by --require cost.*. The expected figures are counted here again
// from the answers files' token counts.
TEST(CliEval, CostStandsBesideAccuracyPerModel) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string out = fresh_path("eval_cost.json"), html = fresh_path("eval_cost.html");
  const std::string markdown = fresh_path("eval_cost.md");
  const std::string answers = fresh_path("eval_cost_answers.jsonl");
  fresh_path("eval_cost_answers.m.jsonl");
  fresh_path("eval_cost_answers.other.jsonl");
  auto r = run_clef(eval_args(
      server, files,
      {"-m", "m", "-m", "other", "--price", "m=1000", "--price", "other=3000", "--report-json", out,
       "--report-html", html, "--report-md", markdown, "--answers", answers}));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json report = report_at(out);
  for (const auto& [model, price] :
       {std::pair<std::string, double>{"m", 1000}, std::pair<std::string, double>{"other", 3000}}) {
    double tokens = 0;
    // --answers A.jsonl with two models writes A.m.jsonl and A.other.jsonl.
    const std::string written = answers.substr(0, answers.size() - 6) + "." + model + ".jsonl";
    for (const auto& line : lines_of(read_file(written)))
      tokens += line["usage"]["input_tokens"].get<double>();
    const Json& cost = report["models"][model]["cost"];
    const double total = tokens * price / 1e6;
    EXPECT_EQ(cost["known"], 10) << model;
    EXPECT_EQ(cost["unknown"], 0) << model;
    EXPECT_NEAR(cost["total_usd"].get<double>(), total, 1e-9) << model;
    EXPECT_NEAR(cost["per_1000"].get<double>(), total / 10 * 1000, 1e-9) << model;
    const double right =
        report["models"][model]["overall"]["all_correct"]["value"].get<double>() * 10;
    EXPECT_NEAR(cost["per_correct"].get<double>(), total / right, 1e-9) << model;
  }
  const double m_per_1000 = report["models"]["m"]["cost"]["per_1000"].get<double>();
  const double other_per_1000 = report["models"]["other"]["cost"]["per_1000"].get<double>();
  EXPECT_GT(other_per_1000, 2.5 * m_per_1000);
  EXPECT_NE(r.out.find("per 1,000 decisions"), std::string::npos) << r.out;
  EXPECT_NE(read_file(markdown).find("### Cost"), std::string::npos) << read_file(markdown);
  const std::string page = read_file(html);
  const auto chart = page.find("aria-label=\"Accuracy against cost\"");
  ASSERT_NE(chart, std::string::npos);
  std::size_t points = 0;
  for (auto at = page.find("class=\"dot\"><title>", chart); at != std::string::npos;
       at = page.find("class=\"dot\"><title>", at + 1))
    ++points;
  EXPECT_EQ(points, 2u) << "one point per model";

  // A gate between the two prices fails the dear model only (exit 1); a cost no one knows fails
  // it too, saying why.
  const std::string limit = std::to_string((m_per_1000 + other_per_1000) / 2);
  auto gated =
      run_clef(eval_args(server, files,
                         {"-m", "m", "-m", "other", "--price", "m=1000", "--price", "other=3000",
                          "--answers", answers, "--require", "cost.per_1000<=" + limit}));
  EXPECT_EQ(gated.code, 1) << gated.err;
  EXPECT_NE(gated.err.find("other: cost.per_1000<="), std::string::npos) << gated.err;
  EXPECT_EQ(gated.err.find("m: cost.per_1000<="), std::string::npos) << gated.err;
  auto unpriced = run_clef(eval_args(
      server, files, {"-m", "m", "--backend", "systemone", "--require", "cost.per_item<=1"}));
  EXPECT_EQ(unpriced.code, 1) << unpriced.err;
  EXPECT_NE(unpriced.err.find("no decision's cost is known"), std::string::npos) << unpriced.err;
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

TEST(CliEval, ARequirementNoRunCouldMeetIsRefusedBeforeAnythingIsSent) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  for (const char* malformed :
       {"team.bogus >= 0.5", "nosuch.accuracy >= 0.5", "team.auroc > 0.5",
        "lower(team.macro_f1) > 0", "team.confusion > 0", "team.position_flip_rate <= 1"}) {
    auto r = run_clef(eval_args(server, files, {"-m", "m", "--require", malformed}));
    EXPECT_EQ(r.code, 2) << malformed << ": " << r.err;
    EXPECT_NE(r.err.find("malformed requirement"), std::string::npos) << r.err;
    EXPECT_EQ(server.requests().size(), 0u) << malformed << " cost a run before it was refused";
  }
  // What only a run can show (a class, a probe's metric) is read after it, as before.
  auto later =
      run_clef(eval_args(server, files, {"-m", "m", "--require", "team.recall[nosuch] > 0"}));
  EXPECT_EQ(later.code, 2) << later.err;
  EXPECT_GT(server.requests().size(), 0u);
}

TEST(CliEval, NoReportIsWrittenOverTheAnswersRunRecord) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string answers = fresh_path("eval_record_answers.jsonl");
  ASSERT_EQ(run_clef(eval_args(server, files, {"-m", "m", "--answers", answers})).code, 0);
  const std::string record = answers + ".clef-run.json";
  const std::string kept = read_file(record);
  for (const char* flag : {"--report-json", "--report-md", "--report-html", "--policy-out"}) {
    auto r = run_clef(eval_args(server, files, {"-m", "m", "--answers", answers, flag, record}));
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find("--answers' run record"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(record), kept) << flag;
  }
}

TEST(CliEval, NoReportIsWrittenOverAFileTheRunReads) {
  // A report over the token file replaced the token (outside pass); the prices file, a CA file
  // and a --from-results file's run record were as open to it.
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string token = write_temp_file("eval_reads_token.txt", "tok123SECRET\n");
  const std::string prices = write_temp_file("eval_reads_prices.txt", "m=1000\n");
  const std::string answers = fresh_path("eval_reads_answers.jsonl");
  ASSERT_EQ(run_clef(eval_args(server, files, {"-m", "m", "--answers", answers})).code, 0);
  const std::string record = answers + ".clef-run.json";
  const std::string kept_record = read_file(record);
  for (const auto& [extra, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"-m", "m", "--api-token-file", token, "--report-json", token}, "--api-token-file"},
           {{"-m", "m", "--prices", prices, "--report-md", prices}, "--prices"},
           {{"-m", "m", "--ca-cert", token, "--report-html", token}, "--ca-cert"},
           {{"-m", "m", "--from-results", answers, "--report-json", record},
            "--from-results' run record"}}) {
    auto r = run_clef(eval_args(server, files, extra));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_file(token), "tok123SECRET\n");
  EXPECT_EQ(read_file(prices), "m=1000\n");
  EXPECT_EQ(read_file(record), kept_record);
}

TEST(CliEval, AnInterruptSaysHowEvalGoesOn) {
  // clef eval has no --resume: with --answers it goes on when run again; without, nothing was kept.
  FakeServer server;
  script_model_m(server);
  server.set_latency(std::chrono::milliseconds(2000));
  EvalFiles files;
  for (const bool keep : {false, true}) {
    const std::string err = fresh_path("eval_interrupt_err.txt");
    std::vector<std::string> extra = {"-m", "m", "-j", "2"};
    if (keep) extra.insert(extra.end(), {"--answers", fresh_path("eval_interrupt_answers.jsonl")});
    const int before = server.request_count();
    const pid_t child = spawn_clef(eval_args(server, files, extra), "", err);
    if (!wait_until([&] { return server.request_count() >= before + 2; }, "2 in flight")) {
      ::kill(child, SIGKILL);
      wait_for_exit(child);
      return;
    }
    ::kill(child, SIGINT);
    EXPECT_EQ(wait_for_exit(child), 130) << read_file(err);
    const std::string said = read_file(err);
    EXPECT_EQ(said.find("--resume"), std::string::npos) << said;
    EXPECT_NE(said.find(keep ? "run the same command again" : "nothing was kept (no --answers)"),
              std::string::npos)
        << said;
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
  // A --label field no item has (a typo) would skip every item and score nothing.
  auto typo =
      eval(write_temp_file("eval_typo.jsonl", R"({"id": "a", "state": "x", "team": "billing"})"
                                              "\n"),
           {"team=taem"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("no item has a gold answer in the field \"taem\""), std::string::npos)
      << typo.err;
  EXPECT_EQ(server.request_count(), 0);
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
  ASSERT_EQ(r.code, 6) << r.err;  // as clef batch: an item failed, the report is still whole
  const Json team = report_at(out)["models"]["m"]["questions"]["team"];
  expect_interval(team["coverage"], clef::metrics::wilson(8, 9));
  expect_interval(team["accuracy"], clef::metrics::wilson(6, 9));
  expect_interval(team["accuracy_answered"], clef::metrics::wilson(6, 8));
  EXPECT_EQ(team["confusion"]["billing"]["(no answer)"], 1);
  EXPECT_EQ(report_at(out)["models"]["m"]["requests"]["failed"], 1);
}

TEST(CliEval, EveryItemFailingIsExitSixAsInClefBatch) {
  FakeServer server;
  EvalFiles files;
  // A mistyped model: every request is a 404, every item fails.
  auto eval = run_clef(eval_args(server, files, {"-m", "clef-flsh"}));
  EXPECT_EQ(eval.code, 6) << eval.err;
  EXPECT_NE(eval.err.find("10 of 10 items failed"), std::string::npos) << eval.err;
  auto batch = run_clef({"batch", files.data, "-q", files.questions, "-m", "clef-flsh", "--host",
                         server.base_url(), "-o", fresh_path("eval_every_failed.jsonl")});
  EXPECT_EQ(batch.code, eval.code) << batch.err;
  // Answers from another model than asked are not scored as the asked model's: they fail.
  FakeServer other;
  other.set_script([](const clef::testing::RecordedRequest& request, int) {
    std::string body = R"({"model":"some-other-model","answers":{"team":{"type":"choice",)"
                       R"("choice":"billing","probabilities":{"billing":1,"technical":0}},)"
                       R"("refund":{"type":"noul","noul":0.9}}})";
    (void)request;
    return std::optional<clef::testing::Scripted>(clef::testing::Scripted{200, body});
  });
  const std::string report = fresh_path("eval_other_model.json");
  auto scored = run_clef(eval_args(other, files, {"-m", "m", "--report-json", report}));
  EXPECT_EQ(scored.code, 6) << scored.err;
  const Json team = report_at(report)["models"]["m"]["questions"]["team"];
  EXPECT_EQ(team["accuracy"]["value"], 0.0) << team.dump();  // "billing" counted for none
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
  // The human view says why in a sentence, its numbers not padded for a column.
  auto unsure_human = run_clef({"ask", "-q", files.questions, "--host", server.base_url(), "-m",
                                "m", "--policy", strict_path, "money ticket 5"});
  EXPECT_NE(unsure_human.out.find("ABSTAINED (60.0% is below the policy's 75.0%)"),
            std::string::npos)
      << unsure_human.out;
  // batch: the abstained answer is written with its status, and the run is not a failure.
  const std::string out = fresh_path("eval_policy_batch.jsonl");
  auto batch = run_clef({"batch", files.data, "-o", out, "-q", files.questions, "--host",
                         server.base_url(), "-m", "m", "--policy", strict_path});
  EXPECT_EQ(batch.code, 0) << batch.err;
  int abstained = 0;
  for (const auto& line : lines_of(read_file(out)))
    abstained += line["answers"]["team"]["status"] == "abstained";
  EXPECT_EQ(abstained, 2);  // T5 at 0.6 and T9 at 0.7
  // As a table: the abstained rows keep their winner, status "abstained", the question named.
  const std::string table = fresh_path("eval_policy_batch.csv");
  auto csv =
      run_clef({"batch", files.data, "-o", table, "--output-format", "csv", "-q", files.questions,
                "--host", server.base_url(), "-m", "m", "--policy", strict_path});
  EXPECT_EQ(csv.code, 0) << csv.err;
  const std::string rows = read_file(table);
  std::size_t held = 0;
  for (std::size_t at = rows.find(",abstained,team: abstained"); at != std::string::npos;
       at = rows.find(",abstained,team: abstained", at + 1))
    ++held;
  EXPECT_EQ(held, 2u) << rows;
  EXPECT_EQ(rows.find("partial"), std::string::npos) << rows;
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
  // Every file these name exists, so exit 2 comes from the contradiction, and each message
  // says which one (issue 16: the files were missing, so exit 2 came whatever the flags did).
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string results = fresh_path("eval_contradiction_results.jsonl");
  ASSERT_EQ(run_clef(eval_args(server, files, {"-m", "m", "--answers", results})).code, 0);
  const std::string results_copy =
      write_temp_file("eval_contradiction_copy.jsonl", read_file(results));
  const std::string answers = fresh_path("eval_contradiction_answers.jsonl");
  const std::string policy = fresh_path("eval_contradiction_policy.json");
  auto base = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"eval",          files.data, "-q",
                                     files.questions, "--label",  "team=team"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(args);
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--from-results", results, "--policy-out", policy},
       "--policy-out writes fitted thresholds: add --fit-thresholds"},
      {{"--fit-thresholds", "--policy-out", policy, "--from-results", results, "--from-results",
        results_copy, "-m", "a", "-m", "b"},
       "a policy holds for one model"},
      {{"--answers", answers, "--from-results", results}, "not both"},
      {{"--from-results", results, "--from-results", results_copy, "-m", "a"},
       "give one --model per --from-results file"},
      {{"--from-results", results, "--from-results", results_copy, "-m", "a", "-m", "a"},
       "\"a\" is given twice"},
      {{"--from-results", results, "--label", "team"}, "write --label QUESTION=FIELD"},
  };
  for (const auto& [extra, message] : cases) {
    auto r = base(extra);
    EXPECT_EQ(r.code, 2) << message << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  auto from_stdin = run_clef({"eval", "-", "-q", files.questions, "--label", "team=team"});
  EXPECT_EQ(from_stdin.code, 2);
  EXPECT_NE(from_stdin.err.find("reads DATA twice"), std::string::npos) << from_stdin.err;
  // Each of those refused before anything was sent or written.
  EXPECT_FALSE(std::ifstream(policy).good());
  EXPECT_FALSE(std::ifstream(answers).good());
  // And the same files without the contradiction are fine: the refusals were the flags'.
  EXPECT_EQ(base({"--from-results", results, "-m", "m"}).code, 0);
}

TEST(CliEval, ABaselineCatchesRisesPerMetricToleranceAndOtherQuestions) {
  // Issue 16, promise 3: Brier, log loss, ECE rising is the regression; --tolerance METRIC=DELTA
  // excuses one metric only; a baseline of other questions is refused; overall.* and
  // latency_ms.p95 gates work.
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string other_answers = fresh_path("eval_rise_other.jsonl");
  ASSERT_EQ(run_clef(eval_args(server, files, {"-m", "other", "--answers", other_answers})).code,
            0);
  const std::string baseline = fresh_path("eval_rise_baseline.json");
  ASSERT_EQ(run_clef({"eval", files.data, "-q", files.questions, "--label", "team=team", "--label",
                      "refund=refund", "--from-results", other_answers, "-m", "m", "--report-json",
                      baseline})
                .code,
            0);
  const std::string answers = fresh_path("eval_rise_m.jsonl");
  // Every metric that falls is excused, so only the rises can fail the gate.
  std::vector<std::string> falls_excused = {"-m",    "m",          "--answers",
                                            answers, "--baseline", baseline};
  for (const char* metric :
       {"accuracy", "accuracy_answered", "coverage", "macro_f1", "auroc", "within_1"}) {
    falls_excused.push_back("--tolerance");
    falls_excused.push_back(std::string(metric) + "=1");
  }
  auto rises = run_clef(eval_args(server, files, falls_excused));
  EXPECT_EQ(rises.code, 1) << rises.err;
  EXPECT_NE(rises.err.find("m: team.brier went from"), std::string::npos) << rises.err;
  EXPECT_NE(rises.err.find("m: team.log_loss went from"), std::string::npos) << rises.err;
  EXPECT_EQ(rises.err.find("team.accuracy went from"), std::string::npos) << rises.err;
  std::vector<std::string> all_excused = falls_excused;
  for (const char* metric : {"brier", "log_loss", "ece", "mae", "rps"}) {
    all_excused.push_back("--tolerance");
    all_excused.push_back(std::string(metric) + "=10");
  }
  auto excused = run_clef(eval_args(server, files, all_excused));
  EXPECT_EQ(excused.code, 0) << excused.err;

  const std::string other_questions =
      write_temp_file("eval_rise_questions.json",
                      R"({"team": {"type": "choice", "instructions": "Which team, really?",
                   "criteria": {"billing": "Money", "technical": "Bugs"}},
          "refund": {"type": "noul", "instructions": "Asks for money back?"}})");
  auto refused =
      run_clef({"eval", files.data, "-q", other_questions, "--label", "team=team", "--label",
                "refund=refund", "--host", server.base_url(), "-m", "m", "--baseline", baseline});
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_NE(refused.err.find("other questions (its questions_sha256 differs)"), std::string::npos)
      << refused.err;

  auto gates =
      run_clef(eval_args(server, files,
                         {"-m", "m", "--answers", answers, "--require",
                          "overall.mean_accuracy >= 0.5", "--require", "latency_ms.p95 < 60000"}));
  EXPECT_EQ(gates.code, 0) << gates.err;
  auto too_slow = run_clef(eval_args(
      server, files, {"-m", "m", "--answers", answers, "--require", "latency_ms.p95 < 0"}));
  EXPECT_EQ(too_slow.code, 1) << too_slow.err;
  EXPECT_NE(too_slow.err.find("latency_ms.p95 < 0"), std::string::npos) << too_slow.err;
}

TEST(CliEval, AnAnswersFileCutShortIsResumedSendingOnlyWhatIsMissing) {
  // Issue 16, promise 7: "sends only what is missing", from a file an interruption left partial.
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string answers = fresh_path("eval_partial.jsonl");
  const std::string full_report = fresh_path("eval_partial_full.json");
  ASSERT_EQ(run_clef(eval_args(server, files,
                               {"-m", "m", "--answers", answers, "--report-json", full_report}))
                .code,
            0);
  const auto lines = lines_of(read_file(answers));
  ASSERT_EQ(lines.size(), 10u);
  std::string first_four;
  for (int i = 0; i < 4; ++i) first_four += lines[static_cast<std::size_t>(i)].dump() + "\n";
  write_temp_file("eval_partial.jsonl", first_four);
  const int before = server.request_count();
  const std::string resumed_report = fresh_path("eval_partial_resumed.json");
  auto resumed = run_clef(
      eval_args(server, files, {"-m", "m", "--answers", answers, "--report-json", resumed_report}));
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(server.request_count() - before, 6);
  EXPECT_EQ(lines_of(read_file(answers)).size(), 10u);
  auto without_latency = [](Json report) {
    for (auto& [model, body] : report["models"].items()) body.erase("latency_ms");
    return report;
  };
  EXPECT_EQ(without_latency(report_at(resumed_report)), without_latency(report_at(full_report)));
}

TEST(CliEval, RecordsAndReplaysWithNoServer) {
  // Issue 16, promise 6: clef eval --record, then --replay with nothing listening.
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string cassette = fresh_path("eval_cassette.jsonl");
  const std::string live = fresh_path("eval_recorded.json");
  ASSERT_EQ(
      run_clef(eval_args(server, files, {"-m", "m", "--record", cassette, "--report-json", live}))
          .code,
      0);
  const std::string replayed = fresh_path("eval_replayed.json");
  auto replay = run_clef({"eval", files.data, "-q", files.questions, "--label", "team=team",
                          "--label", "refund=refund", "--host",
                          "http://127.0.0.1:" + std::to_string(clef::refusing_port()), "-m", "m",
                          "--replay", cassette, "--report-json", replayed});
  EXPECT_EQ(replay.code, 0) << replay.err;
  Json a = report_at(live), b = report_at(replayed);
  for (Json* report : {&a, &b})
    for (auto& [model, body] : (*report)["models"].items()) body.erase("latency_ms");
  EXPECT_EQ(a, b);
}

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
      R"({"id": "T4", "answers": {"team": "billing"}, "usage": {"input_tokens": "many"}})"
      "\n");
  ASSERT_EQ(odd.code, 6) << odd.err;  // items without a usable answer, as clef batch counts
  const Json team = Json::parse(read_file(report))["models"]["m"]["questions"]["team"];
  EXPECT_EQ(team["answered"], 1);  // only T3
  EXPECT_DOUBLE_EQ(team["accuracy"]["value"].get<double>(), 1.0 / 9);
  // A line that is no result (no id and no input line number, an id that is an array or an
  // object) is named, not passed over as if the item were missing.
  for (const char* line :
       {R"({"id": [1], "answers": {}})", R"({"hello": 1})", R"({"id": {"x": 1}})"}) {
    auto stranger = score(std::string("{\"id\": \"T1\", \"answers\": {}}\n") + line + "\n");
    EXPECT_EQ(stranger.code, 2) << line << ": " << stranger.err;
    EXPECT_NE(stranger.err.find("line 2"), std::string::npos) << stranger.err;
  }
  // clef batch's line for an input line it could not read has its line number, not an id.
  EXPECT_EQ(score("{\"id\": null, \"line\": 3, \"error\": {\"kind\": \"invalid_input\"}}\n").code,
            6);
}

}  // namespace

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Issue 15, item 17: every request failed (a wrong model name). Brier, ECE, AUROC and latency
// were 0, 0, 0.5 and 0 — a perfect model — so gates on them passed with exit 0.
TEST(CliEval, NothingAnsweredIsUndefinedAndFailsEveryGateOnIt) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string out = fresh_path("eval_none.json"), md = fresh_path("eval_none.md");
  auto r = run_clef(
      eval_args(server, files,
                {"-m", "nosuch", "--report-json", out, "--report-md", md, "--require",
                 "team.brier <= 0.01", "--require", "latency_ms.p95 < 1", "--require",
                 "refund.auroc >= 0.9", "--require", "upper(team.ece) <= 0.05", "--require",
                 "lower(team.precision[billing]) >= 0", "--require", "team.accuracy >= 0"}));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_FALSE(contains(r.err, "every requirement holds")) << r.err;
  for (const char* failure :
       {"requirement failed: nosuch: team.brier <= 0.01 (team.brier is undefined: no item was "
        "answered)",
        "nosuch: latency_ms.p95 < 1 (latency_ms.p95 is undefined: no request was answered)",
        "nosuch: refund.auroc >= 0.9 (refund.auroc is undefined: no item was answered)",
        "(team.ece is undefined: no item was answered)",
        "(team.precision[billing] is undefined: no item was answered billing)"}) {
    EXPECT_TRUE(contains(r.err, failure)) << failure << "\n" << r.err;
  }
  EXPECT_FALSE(contains(r.err, "team.accuracy >= 0")) << "0 of 9 right is defined, and holds";
  // Why: the failures by kind, with the server's word for it.
  EXPECT_TRUE(contains(r.err,
                       "clef: eval: nosuch: 10 of 10 items failed: not_found 10 (model "
                       "\"nosuch\""))
      << r.err;
  const Json model = report_at(out)["models"]["nosuch"];
  EXPECT_EQ(model["requests"]["failures"]["not_found"]["items"], 10);
  EXPECT_TRUE(contains(model["requests"]["failures"]["not_found"]["message"], "nosuch"));
  const Json& team = model["questions"]["team"];
  for (const char* key : {"brier", "log_loss", "ece", "ece_noise_floor", "accuracy_answered"})
    EXPECT_TRUE(team[key].is_null()) << key << ": " << team[key].dump();
  EXPECT_TRUE(team["classes"]["billing"]["precision"].is_null());
  expect_interval(team["accuracy"], clef::metrics::wilson(0, 9));
  EXPECT_TRUE(model["questions"]["refund"]["auroc"].is_null());
  EXPECT_TRUE(model["latency_ms"]["p50"].is_null());
  EXPECT_TRUE(model["latency_ms"]["p95"].is_null());
  // People see n/a, never a number.
  EXPECT_TRUE(contains(r.out, "latency p50 n/a, p95 n/a")) << r.out;
  EXPECT_TRUE(contains(r.out, "Brier n/a  ECE n/a  AUROC n/a")) << r.out;
  const std::string markdown = read_file(md);
  EXPECT_TRUE(contains(markdown, "| 0.000 | n/a | n/a |")) << markdown;
  EXPECT_TRUE(contains(markdown, "### Failed requests")) << markdown;
}

TEST(CliEval, BaselineFailsWhenAMetricBecomesUndefined) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  // The baseline: m's answers, scored under the name the broken run uses.
  const std::string answers = fresh_path("eval_undef_answers.jsonl");
  ASSERT_EQ(run_clef(eval_args(server, files, {"-m", "m", "--answers", answers})).code, 0);
  const std::string baseline = fresh_path("eval_undef_baseline.json");
  ASSERT_EQ(run_clef({"eval", files.data, "-q", files.questions, "--label", "team=team", "--label",
                      "refund=refund", "--from-results", answers, "-m", "nosuch", "--report-json",
                      baseline})
                .code,
            0);
  auto r = run_clef(eval_args(server, files, {"-m", "nosuch", "--baseline", baseline}));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "worse than the baseline: nosuch: team.brier went from 0.2511 to "
                       "undefined (no item was answered)"))
      << r.err;
}

/// The report of model m on the ten tickets, and a way to gate a run on a damaged copy of it.
struct BaselineFixture {
  FakeServer server;
  EvalFiles files;
  std::string answers = fresh_path("eval_damaged_answers_" + test_name() + ".jsonl");
  Json good;
  int written = 0;

  BaselineFixture() {
    script_model_m(server);
    const std::string path = fresh_path("eval_damaged_good_" + test_name() + ".json");
    auto r = run_clef(
        eval_args(server, files, {"-m", "m", "--answers", answers, "--report-json", path}));
    EXPECT_EQ(r.code, 0) << r.err;
    good = report_at(path);
  }
  clef::testing::CliResult gate(const Json& baseline, bool keep_answers = true) {
    const std::string path = write_temp_file(
        "eval_damaged_" + test_name() + std::to_string(written++) + ".json", baseline.dump());
    std::vector<std::string> extra = {"-m", "m", "--baseline", path};
    if (keep_answers) extra.insert(extra.end(), {"--answers", answers});
    return run_clef(eval_args(server, files, extra));
  }
};

// Issue 15, item 18: a damaged baseline compared nothing and printed "every requirement holds".
TEST(CliEval, DamagedBaselineIsRefusedNamingTheField) {
  BaselineFixture f;
  struct Case {
    std::function<void(Json&)> damage;
    const char* message;
  };
  const std::vector<Case> cases = {
      {[](Json& b) { b["models"]["m"]["questions"] = Json::object(); },
       "models.m.questions is empty"},
      {[](Json& b) { b["models"]["m"] = 5; }, "models.m is not an object"},
      {[](Json& b) { b["models"]["m"].erase("questions"); }, "models.m has no \"questions\""},
      {[](Json& b) { b["models"] = Json::object(); }, "has no model in \"models\""},
      {[](Json& b) { b["models"]["m"]["questions"]["team"]["accuracy"] = "0.9"; },
       "models.m.questions.team.accuracy is not an interval {value, low, high} or null"},
      {[](Json& b) { b["models"]["m"]["questions"]["team"]["macro_f1"] = Json::object(); },
       "models.m.questions.team.macro_f1 is not a number or null"},
      {[](Json& b) { b["models"]["m"]["questions"]["team"]["brier"].erase("value"); },
       "models.m.questions.team.brier is an interval without a number \"value\""},
      {[](Json& b) { b["models"]["m"]["questions"]["refund"].erase("auroc"); },
       "models.m.questions.refund has no \"auroc\""},
      {[](Json& b) { b["models"]["m"]["questions"]["team"]["type"] = 3; },
       "models.m.questions.team.type is not choice, noul, score or box"},
      {[](Json& b) { b.erase("schema"); }, "not a clef-eval/1 report"},
      {[](Json& b) { b.erase("dataset_sha256"); }, "has no \"dataset_sha256\" string"},
      {[](Json& b) { b["questions_sha256"] = 7; }, "has no \"questions_sha256\" string"},
      {[](Json& b) { b = Json::array(); }, "not a clef-eval/1 report"},
  };
  for (const auto& c : cases) {
    Json baseline = f.good;
    c.damage(baseline);
    auto r = f.gate(baseline);
    EXPECT_EQ(r.code, 2) << c.message << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.message << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "--baseline ")) << r.err;
    EXPECT_FALSE(contains(r.err, "every requirement holds")) << r.err;
  }
  // Refused before anything is sent: a broken gate must not cost a run.
  const std::size_t sent = f.server.request_count();
  Json empty = f.good;
  empty["models"]["m"]["questions"] = Json::object();
  EXPECT_EQ(f.gate(empty, false).code, 2);
  EXPECT_EQ(f.server.request_count(), sent);
}

TEST(CliEval, BaselineComparingNothingIsNeverAPass) {
  BaselineFixture f;
  // Every metric null: nothing to compare with.
  Json all_null = f.good;
  for (auto& [name, question] : all_null["models"]["m"]["questions"].items()) {
    for (const char* metric : {"accuracy", "accuracy_answered", "coverage", "macro_f1", "auroc",
                               "within_1", "brier", "log_loss", "ece", "mae", "rps"}) {
      if (question.contains(metric)) question[metric] = nullptr;
    }
  }
  auto r = f.gate(all_null);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "no metric defined in both")) << r.err;
  // Another model's baseline.
  Json other = f.good;
  other["models"]["x"] = other["models"]["m"];
  other["models"].erase("m");
  r = f.gate(other);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "model m is not in the baseline")) << r.err;
  // One metric undefined then: said, and the others are still compared.
  Json one_null = f.good;
  one_null["models"]["m"]["questions"]["team"]["brier"] = nullptr;
  r = f.gate(one_null);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "clef: baseline: m: team.brier was undefined in the baseline (now "
                       "0.2511): not compared"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "every requirement holds")) << r.err;
  one_null["models"]["m"]["questions"]["team"]["accuracy"]["value"] = 0.95;
  r = f.gate(one_null);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "m: team.accuracy went from 0.95 to 0.7778")) << r.err;
}

// Issue 15, item 19: 1e400 read as +inf, so 'x <= 1e400' always held.
TEST(CliEval, RequireLimitMustBeAFiniteNumber) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  for (const char* requirement : {"team.accuracy <= 1e400", "team.accuracy >= -1e400",
                                  "team.accuracy <= 1e309", "team.brier < 0x1p3"}) {
    auto r = run_clef(eval_args(server, files, {"-m", "m", "--require", requirement}));
    EXPECT_EQ(r.code, 2) << requirement << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "is not a finite decimal number")) << r.err;
  }
  EXPECT_EQ(server.request_count(), 0) << "a malformed gate is refused before anything is sent";
  auto tolerance = run_clef(eval_args(
      server, files, {"-m", "m", "--baseline", files.data, "--tolerance", "accuracy=1e400"}));
  EXPECT_EQ(tolerance.code, 2) << tolerance.err;
  EXPECT_TRUE(contains(tolerance.err, "a tolerance is METRIC=DELTA")) << tolerance.err;
}

// Issue 15, item 2 (second half): std::regex backtracked over the spaces: 6.8 s for 996 bytes.
TEST(CliEvalGates, LongMalformedRequirementIsRefusedPromptly) {
  const std::vector<std::string> texts = {
      "lower(" + std::string(990, ' '), "lower(" + std::string(990, ' ') + ")",
      "upper(" + std::string(200000, ' ') + "a.b", std::string(200000, 'a') + " >= 1x",
      "a.b >= " + std::string(200000, '1') + "x"};
  const auto started = std::chrono::steady_clock::now();
  for (const auto& text : texts) {
    auto r = clef::parse_requirement(text);
    ASSERT_FALSE(r) << text.substr(0, 20);
    EXPECT_TRUE(contains(r.error().message, "malformed requirement")) << r.error().message;
    EXPECT_LT(r.error().message.size(), 600u) << "the quote of a long flag is cut";
  }
  // Microseconds each now: the bound only tells "answers" from "hangs" (the old regex took
  // 6.4 s on the 996-character text alone, and would not end on the others).
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST(CliEvalGates, RequirementSyntaxIsUnchanged) {
  struct Accepted {
    const char* text;
    const char* bound;
    const char* question;
    const char* metric;
    const char* label;
    const char* op;
    double limit;
  };
  for (const Accepted& a : {
           Accepted{"team.accuracy >= 0.9", "", "team", "accuracy", "", ">=", 0.9},
           Accepted{"  team.accuracy>=.5  ", "", "team", "accuracy", "", ">=", 0.5},
           Accepted{"lower(team.precision[billing]) >= 0.95", "lower", "team", "precision",
                    "billing", ">=", 0.95},
           Accepted{"upper( team.precision[a b] ) < 1e-3", "upper", "team", "precision", "a b", "<",
                    1e-3},
           Accepted{"latency_ms.p95 < 500", "", "latency_ms", "p95", "", "<", 500},
           Accepted{"x.y != -2.", "", "x", "y", "", "!=", -2},
           Accepted{"x.y == +1E2", "", "x", "y", "", "==", 100},
           Accepted{"x.y<=0", "", "x", "y", "", "<=", 0},
           Accepted{"x.y[l]>3", "", "x", "y", "l", ">", 3},
       }) {
    auto r = clef::parse_requirement(a.text);
    ASSERT_TRUE(r) << a.text << ": " << r.error().message;
    EXPECT_EQ(r->bound, a.bound) << a.text;
    EXPECT_EQ(r->question, a.question) << a.text;
    EXPECT_EQ(r->metric, a.metric) << a.text;
    EXPECT_EQ(r->label, a.label) << a.text;
    EXPECT_EQ(r->op, a.op) << a.text;
    EXPECT_DOUBLE_EQ(r->limit, a.limit) << a.text;
  }
  for (const char* text : {"",
                           "team.accuracy",
                           "team.accuracy >=",
                           "team.accuracy >= high",
                           ">= 1",
                           ".y > 1",
                           "x. > 1",
                           "x.y[] > 1",
                           "x.y[a]b > 1",
                           "x.y[a[b]] > 1",
                           "lower(x.y > 1",
                           "lower(x.y)) > 1",
                           "lower((x.y)) > 1",
                           "x.y >= 1.2.3",
                           "x.y >= inf",
                           "x.y >= nan",
                           "x.y >= 1e",
                           "x.y => 1",
                           "x.y >= 1 2",
                           "x.y-z >= 1",
                           "x y.z >= 1",
                           "x.y = 1",
                           "lower (x.y) > 1"}) {
    EXPECT_FALSE(clef::parse_requirement(text)) << text;
  }
}

// Issue 15, item 19: labels and model names went into Markdown raw; `<img src=…>` rendered.
TEST(CliEval, MarkdownAndHtmlReportsShowUserTextAsText) {
  FakeServer server;
  const std::string hostile = "<img src=x onerror=alert(1)> a|b `c` [d](http://e) *f* &lt;";
  const std::string model = "m<b>*_|";
  Json questions = {{"team",
                     {{"type", "choice"},
                      {"instructions", "Which?"},
                      {"criteria", {{hostile, "Money"}, {"technical", "Bugs"}}}}}};
  const std::string questions_path =
      write_temp_file("eval_q_md_" + test_name() + ".json", questions.dump());
  const std::string data = write_temp_file(
      "eval_md_" + test_name() + ".jsonl",
      Json{{"id", 1}, {"state", "money ticket 1"}, {"team", hostile}}.dump() + "\n" +
          Json{{"id", 2}, {"state", "bug ticket 6"}, {"team", "technical"}}.dump() + "\n");
  server.set_models({model});
  server.set_rules(
      {rule(model, "team", "money", hostile, 0.8), rule(model, "team", "bug", "technical", 0.9)});
  const std::string html = fresh_path("eval_md_report.html"), md = fresh_path("eval_md_report.md");
  auto r = run_clef({"eval", data, "-q", questions_path, "--label", "team=team", "--host",
                     server.base_url(), "-m", model, "--report-html", html, "--report-md", md});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string markdown = read_file(md);
  for (const char* raw : {"<img src=x", "<b>", "[d](", "`c`", "*f*", "a|b", "&lt;"})
    EXPECT_FALSE(contains(markdown, raw)) << raw << "\n" << markdown;
  // CommonMark renders a backslash-escaped punctuation character as that character.
  EXPECT_TRUE(contains(
      markdown,
      R"(\<img src\=x onerror\=alert\(1\)\> a\|b \`c\` \[d\]\(http\:\/\/e\) \*f\* \&lt\;)"))
      << markdown;
  EXPECT_TRUE(contains(markdown, R"(| m\<b\>\*\_\| | team | choice | 2 |)")) << markdown;
  const std::string page = read_file(html);
  for (const char* raw : {"<img", "<b>"}) EXPECT_FALSE(contains(page, raw)) << raw;
  EXPECT_TRUE(contains(page,
                       "&lt;img src=x onerror=alert(1)&gt; a|b `c` [d](http://e) *f* "
                       "&amp;lt;"))
      << page;
  EXPECT_TRUE(contains(page, "<h2>m&lt;b&gt;*_|</h2>")) << page;
}

// A right-to-left override in a label or an id showed it as another in the HTML and Markdown
// reports, and an ESC reached the HTML raw: both are shown as '?', as on a terminal.
TEST(CliEval, ReportsShowNoControlOrBidiCharactersFromTheFiles) {
  FakeServer server;
  const std::string label = R"(bill\u202eing\u001b[31m)";  // as the JSON files spell it
  const std::string questions =
      write_temp_file("eval_q_bidi.json",
                      R"({"team": {"type": "choice", "instructions": "Which?", "criteria": {")" +
                          label + R"(": "Money", "technical": "Bugs"}}})");
  const std::string data = write_temp_file(
      "eval_bidi.jsonl", R"({"id": "x\u202e1\u001b[2J", "state": "money ticket 1", "team": ")" +
                             label + "\"}\n" +
                             R"({"id": 2, "state": "bug ticket 6", "team": "technical"})" + "\n");
  const std::string html = fresh_path("eval_bidi.html"), md = fresh_path("eval_bidi.md");
  auto r = run_clef({"eval", data, "-q", questions, "--label", "team=team", "--host",
                     server.base_url(), "--report-html", html, "--report-md", md});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string& path : {html, md}) {
    const std::string report = read_file(path);
    EXPECT_FALSE(contains(report, "\x1b")) << path;
    EXPECT_FALSE(contains(report, "\xe2\x80\xae")) << path;  // U+202E
  }
  EXPECT_TRUE(contains(read_file(html), "bill?ing?[31m")) << read_file(html);
  EXPECT_TRUE(contains(read_file(md), R"(bill\?ing \[31m)")) << read_file(md);
}

// Issue 15, item 21: a policy without a model applied to any model; unknown labels and
// questions were accepted silently.
TEST(CliEval, PolicyNamesItsModelAndFitsTheQuestions) {
  FakeServer server;
  script_model_m(server);
  EvalFiles files;
  const std::string fitted = fresh_path("eval_policy_fit_" + test_name() + ".json");
  auto fit = run_clef(eval_args(
      server, files,
      {"-m", "m", "--fit-thresholds", "--target-precision", "0.5", "--policy-out", fitted}));
  ASSERT_EQ(fit.code, 0) << fit.err;
  const Json written = Json::parse(read_file(fitted));
  int n = 0;
  auto ask = [&](const Json& policy, const std::string& command = "ask") {
    const std::string path = write_temp_file(
        "eval_policy_" + test_name() + std::to_string(n++) + ".json", policy.dump());
    std::vector<std::string> args = {command, "-q", files.questions, "--host", server.base_url(),
                                     "-m",    "m",  "--policy",      path};
    if (command == "ask") args.push_back("money ticket 1");
    if (command == "batch") args.insert(args.begin() + 1, files.data);
    return run_clef(args);
  };
  struct Case {
    std::function<void(Json&)> change;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {[](Json& p) { p.erase("model"); }, "has no \"model\" string"},
           {[](Json& p) { p["model"] = ""; }, "has no \"model\" string"},
           {[](Json& p) { p["questions"]["teem"] = p["questions"]["team"]; },
            "\"teem\", which is not asked"},
           {[](Json& p) { p["questions"]["team"]["labels"]["biling"] = 0.5; },
            "\"biling\" is not an option of team"},
           {[](Json& p) { p["questions"]["refund"]["labels"]["yes"] = 0.5; },
            "\"refund\" is not a choice question"},
       }) {
    Json policy = written;
    c.change(policy);
    for (const char* command : {"ask", "batch"}) {
      auto r = ask(policy, command);
      EXPECT_EQ(r.code, 2) << command << ": " << c.message << "\n" << r.err;
      EXPECT_TRUE(contains(r.err, c.message)) << command << ": " << c.message << "\n" << r.err;
    }
  }
  // A question asked but not in the policy is never abstained: said on stderr, not refused
  // (eval may label only some of the questions it asks).
  Json partial = written;
  partial["questions"].erase("refund");
  partial["questions"]["team"] = {{"threshold", 0.5}};
  auto r = ask(partial);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "has no threshold for refund: its answers are never abstained"))
      << r.err;
  EXPECT_FALSE(contains(ask(written).err, "has no threshold")) << "both questions are covered";
}

}  // namespace

namespace {

TEST(CliEval, FailureSummaryNamesKindsAndMissingItemsInOneShortLine) {
  EvalFiles files;
  const std::string results = write_temp_file(
      "eval_failed_results_" + test_name() + ".jsonl",
      Json{{"id", "T1"}, {"error", {{"kind", "server"}, {"message", std::string(5000, 'x')}}}}
              .dump() +
          "\n" + Json{{"id", "T2"}, {"error", "failed"}}.dump() + "\n");
  const std::string report = fresh_path("eval_failed_summary.json");
  auto r = run_clef({"eval", files.data, "-q", files.questions, "--label", "team=team",
                     "--from-results", results, "-m", "m", "--report-json", report});
  ASSERT_EQ(r.code, 6) << r.err;
  const std::string line = "clef: eval: m: 2 of 10 items failed: server 1 (" +
                           std::string(200, 'x') +
                           "…), unknown 1 (failed); 8 of 10 items have no result in the results "
                           "file\n";
  EXPECT_TRUE(r.err.find(line) != std::string::npos) << r.err.substr(0, 600);
  const Json requests = report_at(report)["models"]["m"]["requests"];
  EXPECT_EQ(requests["failures"]["server"]["message"].get<std::string>().size(), 5000u)
      << "the report keeps the whole message";
  EXPECT_EQ(requests["missing"], 8);
}

}  // namespace

namespace {

// The issue's comparison: a System One model and an OpenAI-dialect model on the same labelled
// tickets, each through its own mock and `clef batch`, then `clef eval --from-results` pairs them.
TEST(CliEval, ComparesASystemOneModelWithAnOpenAiDialectModel) {
  EvalFiles files;
  FakeServer system_one;  // Ollama's System One
  script_model_m(system_one);
  FakeServer openai(clef::MockProfile::openai);
  openai.set_models({"luna"});  // every team right at 0.9, refund always "no"
  openai.set_rules({rule("luna", "team", "money", "billing", 0.9),
                    rule("luna", "team", "bug", "technical", 0.9),
                    rule("luna", "refund", ".", "no", 0.9)});
  const std::string key = write_temp_file("openai_key_" + test_name(), "sk-test\n");
  const std::string from_m = fresh_path("cross_m.jsonl");
  const std::string from_luna = fresh_path("cross_luna.jsonl");
  auto m = run_clef({"batch", files.data, "-o", from_m, "-q", files.questions, "--host",
                     system_one.base_url(), "-m", "m"});
  ASSERT_EQ(m.code, 0) << m.err;
  auto luna =
      run_clef({"batch", files.data, "-o", from_luna, "-q", files.questions, "--backend", "openai",
                "--host", openai.base_url() + "/v1", "--api-token-file", key, "-m", "luna"});
  ASSERT_EQ(luna.code, 0) << luna.err;
  ASSERT_EQ(openai.request_count(), 10);
  // What the OpenAI mock received was its own dialect.
  const Json sent = Json::parse(openai.requests().at(0).body);
  EXPECT_TRUE(sent["questions"].is_array());
  EXPECT_EQ(sent["questions"][0]["type"], "choice");
  EXPECT_EQ(sent["questions"][1]["type"], "predicate");
  EXPECT_TRUE(sent["input"].is_string());

  const std::string report = fresh_path("cross_report.json");
  auto eval = run_clef({"eval",
                        files.data,
                        "-q",
                        files.questions,
                        "--label",
                        "team=team",
                        "--label",
                        "refund=refund",
                        "--from-results",
                        from_m,
                        "--from-results",
                        from_luna,
                        "-m",
                        "m",
                        "-m",
                        "luna",
                        "--report-json",
                        report,
                        "--color",
                        "never"});
  ASSERT_EQ(eval.code, 0) << eval.err;
  EXPECT_NE(eval.out.find("m vs luna"), std::string::npos) << eval.out;
  EXPECT_NE(eval.out.find("McNemar p"), std::string::npos) << eval.out;
  const Json json = Json::parse(read_file(report));
  ASSERT_EQ(json["comparison"].size(), 1u) << json.dump();
  const Json& pair = json["comparison"][0];
  EXPECT_EQ(pair["a"], "m");
  EXPECT_EQ(pair["b"], "luna");
  // "m" misroutes tickets 5 and 9, where "luna" gets every team right.
  EXPECT_EQ(pair["questions"]["team"]["only_a_right"], 0) << pair.dump();
  EXPECT_EQ(pair["questions"]["team"]["only_b_right"], 2) << pair.dump();
  EXPECT_EQ(pair["questions"]["team"]["n"], 9) << pair.dump();
}

}  // namespace

namespace {

/// Two "versions" of one model on the mock: v2 answers tickets 3 and 7 otherwise than v1 (3:
/// technical where v1 says billing, 7: billing where v1 says technical); refund is the same.
void script_two_versions(FakeServer& server) {
  server.set_models({"v1", "v2"});
  std::vector<AnswerRule> rules;
  for (const char* version : {"v1", "v2"}) {
    const bool v2 = std::string(version) == "v2";
    if (v2) rules.push_back(rule(version, "team", "ticket 3$", "technical", 0.6));
    if (v2) rules.push_back(rule(version, "team", "ticket 7$", "billing", 0.55));
    rules.push_back(rule(version, "team", "money", "billing", 0.8));
    rules.push_back(rule(version, "team", "bug", "technical", 0.8));
    rules.push_back(rule(version, "refund", ".", "no", 0.7));
  }
  server.set_rules(rules);
}

TEST(CliDiff, TwoVersionsOfAModelDifferExactlyOnTheItemsThatChanged) {
  FakeServer server;
  script_two_versions(server);
  EvalFiles files;
  const std::string before = fresh_path("diff_v1.jsonl"), after = fresh_path("diff_v2.jsonl");
  const std::string report = fresh_path("diff_report.json");
  for (const auto& [model, out] :
       {std::pair<std::string, std::string>{"v1", before}, {"v2", after}}) {
    auto r = run_clef({"batch", files.data, "-q", files.questions, "--host", server.base_url(),
                       "-m", model, "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  auto r = run_clef({"diff", before, after, "-q", files.questions, "--report-json", report,
                     "--require", "refund.agreement >= 1", "--require", "team.agreement >= 0.9"});
  EXPECT_EQ(r.code, 1) << r.err;  // team agrees on 8 of 10
  EXPECT_NE(r.err.find("requirement failed: team.agreement >= 0.9 (it is 0.8)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("refund.agreement"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("8 of 10 agree"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"T3\": billing 0.80 → technical 0.60"), std::string::npos) << r.out;

  // A report over a run's record (read for its model version) is refused, as over the run.
  const std::string record = before + ".clef-run.json";
  const std::string kept = read_file(record);
  auto over = run_clef({"diff", before, after, "-q", files.questions, "--report-json", record});
  EXPECT_EQ(over.code, 2) << over.err;
  EXPECT_NE(over.err.find("BEFORE's run record"), std::string::npos) << over.err;
  EXPECT_EQ(read_file(record), kept);

  const Json drift = report_at(report);
  EXPECT_EQ(drift["schema"], "clef-diff/1");
  EXPECT_EQ(drift["a"]["model"], "v1");
  EXPECT_EQ(drift["b"]["model"], "v2");
  EXPECT_EQ(drift["common"], 10);
  const Json& team = drift["questions"]["team"];
  std::vector<std::string> flipped;
  for (const auto& flip : team["flips"]) flipped.push_back(flip["id"].get<std::string>());
  EXPECT_EQ(flipped, (std::vector<std::string>{"T3", "T7"}));
  EXPECT_DOUBLE_EQ(team["agreement"]["value"].get<double>(), 0.8);
  // Winners: v1 billing 5, technical 5; v2 billing 5 (T1, T2, T4, T5, T7), technical 5: the
  // same mix, so no divergence, though two items changed.
  EXPECT_EQ(team["winners"]["billing"], Json({{"a", 5}, {"b", 5}}));
  EXPECT_DOUBLE_EQ(team["js_divergence"].get<double>(), 0.0);
  // |Δp| of v1's winner: T3 billing 0.8 → v2's billing 0.4 (the mock gives the rest to the other
  // option); T7 technical 0.8 → 0.45; 0 on the other eight: (0.4 + 0.35) / 10.
  EXPECT_NEAR(team["mean_abs_delta_p"].get<double>(), 0.075, 1e-6);
  EXPECT_DOUBLE_EQ(drift["questions"]["refund"]["agreement"]["value"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(drift["agreement"]["value"].get<double>(), 0.8);

  // A batch writes lines as answers arrive: the report is the same whatever their order.
  const std::string first_report = read_file(report);
  std::vector<std::string> reversed;
  for (const auto& line : lines_of(read_file(after)))
    reversed.insert(reversed.begin(), line.dump());
  std::string text;
  for (const auto& line : reversed) text += line + "\n";
  { std::ofstream(after, std::ios::trunc) << text; }
  ASSERT_EQ(run_clef({"diff", before, after, "-q", files.questions, "--report-json", report}).code,
            0);
  EXPECT_EQ(read_file(report), first_report);

  // The same run against itself: nothing changed, every gate holds.
  auto same = run_clef({"diff", before, before, "-q", files.questions, "--require",
                        "overall.agreement >= 1", "--require", "team.js_divergence <= 0"});
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.err.find("every requirement holds"), std::string::npos) << same.err;
}

TEST(CliDiff, ShiftedWinnersShowAsDivergenceAndBadInputIsNamed) {
  FakeServer server;
  server.set_models({"v1", "v2"});
  // v2 calls every ticket technical: billing 5 → 0, technical 5 → 10.
  server.set_rules({rule("v1", "team", "money", "billing", 0.8),
                    rule("v1", "team", "bug", "technical", 0.8),
                    rule("v2", "team", ".", "technical", 0.9)});
  EvalFiles files;
  const std::string before = fresh_path("shift_v1.jsonl"), after = fresh_path("shift_v2.jsonl");
  const std::string report = fresh_path("shift_report.json");
  for (const auto& [model, out] :
       {std::pair<std::string, std::string>{"v1", before}, {"v2", after}}) {
    ASSERT_EQ(run_clef({"batch", files.data, "--choice",
                        "team: Which team? | billing=Money | technical=Bugs", "--host",
                        server.base_url(), "-m", model, "-o", out})
                  .code,
              0);
  }
  auto r =
      run_clef({"diff", before, after, "--choice",
                "team: Which team? | billing=Money | technical=Bugs", "--report-json", report});
  ASSERT_EQ(r.code, 0) << r.err;
  // SciPy: jensenshannon([5, 5], [0, 10], base=2) ** 2 = 0.31127812445913283.
  EXPECT_NEAR(report_at(report)["questions"]["team"]["js_divergence"].get<double>(),
              0.31127812445913283, 1e-15);
  EXPECT_EQ(r.out.find("more (--show"), std::string::npos) << r.out;  // 5 flips, all shown
  auto brief = run_clef({"diff", before, after, "--choice",
                         "team: Which team? | billing=Money | technical=Bugs", "--show", "2"});
  EXPECT_NE(brief.out.find("... and 3 more"), std::string::npos) << brief.out;

  // A line that is not a result: exit 2, naming the file and the line.
  const std::string broken = write_temp_file("shift_broken.jsonl", read_file(after) + "{oops\n");
  auto bad = run_clef(
      {"diff", before, broken, "--choice", "team: Which team? | billing=Money | technical=Bugs"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find(broken + ": line 11"), std::string::npos) << bad.err;
  // A report over one of the runs would destroy it.
  auto over =
      run_clef({"diff", before, after, "--choice",
                "team: Which team? | billing=Money | technical=Bugs", "--report-json", after});
  EXPECT_EQ(over.code, 2) << over.err;
}

TEST(CliDiff, NamesTheModelVersionsTheRunsRecorded) {
  FakeServer server;
  EvalFiles files;
  const std::string before = fresh_path("versions_a.jsonl"), after = fresh_path("versions_b.jsonl");
  const std::string report = fresh_path("versions_report.json");
  auto batch = [&](const std::string& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"batch",  files.data,        "-q", files.questions,
                                     "--host", server.base_url(), "-o", out};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_clef(args);
  };
  server.set_model_digest("clef-flash:latest", "sha256:aaaa");
  ASSERT_EQ(batch(before).code, 0);
  server.set_model_digest("clef-flash:latest", "sha256:bbbb");  // re-pulled under its name
  ASSERT_EQ(batch(after).code, 0);
  EXPECT_EQ(report_at(before + ".clef-run.json")["model_version"], "clef-flash:latest@sha256:aaaa");

  auto r = run_clef({"diff", before, after, "-q", files.questions, "--report-json", report});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("model version: clef-flash:latest@sha256:aaaa → "
                       "clef-flash:latest@sha256:bbbb\n"),
            std::string::npos)
      << r.out;
  const Json drift = report_at(report);
  EXPECT_EQ(drift["a"]["model_version"], "clef-flash:latest@sha256:aaaa");
  EXPECT_EQ(drift["b"]["model_version"], "clef-flash:latest@sha256:bbbb");
  auto same = run_clef({"diff", before, before, "-q", files.questions});
  EXPECT_NE(same.out.find("model version: clef-flash:latest@sha256:aaaa → "
                          "clef-flash:latest@sha256:aaaa (the same)"),
            std::string::npos)
      << same.out;

  // A resume under the new digest: the earlier lines are kept, the change is said, and the
  // record names both versions; resuming again under the same one adds nothing.
  const auto sent = server.requests().size();
  auto resumed = batch(before, {"--resume"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("earlier lines were answered by clef-flash:latest@sha256:aaaa; from "
                             "here on clef-flash:latest@sha256:bbbb answers"),
            std::string::npos)
      << resumed.err;
  EXPECT_EQ(report_at(before + ".clef-run.json")["model_version"],
            "clef-flash:latest@sha256:aaaa, then clef-flash:latest@sha256:bbbb");
  auto again = batch(before, {"--resume"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("earlier lines were answered"), std::string::npos) << again.err;
  EXPECT_EQ(report_at(before + ".clef-run.json")["model_version"],
            "clef-flash:latest@sha256:aaaa, then clef-flash:latest@sha256:bbbb");
  EXPECT_EQ(server.requests().size(), sent) << "no decision: every line was kept";

  // A file without a version (another backend, an older clef): "not recorded", null in JSON.
  std::ofstream(after + ".clef-run.json", std::ios::trunc) << "{}";
  auto unknown = run_clef({"diff", before, after, "-q", files.questions, "--report-json", report});
  EXPECT_NE(unknown.out.find("→ not recorded\n"), std::string::npos) << unknown.out;
  EXPECT_TRUE(report_at(report)["b"]["model_version"].is_null());
}

TEST(CliEvalProbes, APositionBiasedModelIsCaughtAndAnUnbiasedOnePasses) {
  EvalFiles files;
  const std::string report = fresh_path("probe_report.json");
  const std::string html = fresh_path("probe_report.html");
  for (const double bias : {0.0, 0.6}) {
    FakeServer server;
    script_model_m(server);
    clef::MockFaults faults;
    faults.position_bias = bias;
    server.set_faults(faults);
    auto r =
        run_clef(eval_args(server, files,
                           {"-m", "m", "--permute", "2", "--report-json", report, "--report-html",
                            html, "--quiet", "--require", "team.position_flip_rate <= 0.05"}));
    const Json team = report_at(report)["models"]["m"]["questions"]["team"];
    EXPECT_EQ(team["position_orders"], 2);
    EXPECT_EQ(team["position_compared"], 10);
    if (bias == 0) {
      // The rules answer by keyword, whatever the order: no item changes.
      EXPECT_EQ(r.code, 0) << r.err;
      EXPECT_DOUBLE_EQ(team["position_flip_rate"]["value"].get<double>(), 0.0);
      EXPECT_TRUE(team["position_flips"].empty());
      // Order 1 is billing, technical; order 2 technical, billing. m's winners: billing on
      // tickets 1-4 and 9, technical on 5-8 and 10 (script_model_m). Listed first: billing in
      // order 1 (5 items) and technical in order 2 (5 items): 10 of the 20 answers at 0.
      EXPECT_EQ(team["position_winner_share"], Json::array({0.5, 0.5}));
      continue;
    }
    // Biased 0.6 toward the first listed: billing always wins in order 1 and technical in
    // order 2, so every item flips and every winner was listed first.
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("requirement failed: m: team.position_flip_rate <= 0.05 (it is 1)"),
              std::string::npos)
        << r.err;  // shown under --quiet: it is why the exit code is 1
    EXPECT_DOUBLE_EQ(team["position_flip_rate"]["value"].get<double>(), 1.0);
    EXPECT_EQ(team["position_winner_share"], Json::array({1.0, 0.0}));
    ASSERT_EQ(team["position_flips"].size(), 10u);
    EXPECT_EQ(team["position_flips"][0]["id"], "T1");
    EXPECT_EQ(team["position_flips"][0]["winners"], Json::array({"billing", "technical"}));
    EXPECT_NE(read_file(html).find("<td>&quot;T1&quot;</td><td>billing</td><td>technical</td>"),
              std::string::npos);
  }
}

TEST(CliEvalProbes, RepeatsAreRealRequestsEvenThroughTheCache) {
  FakeServer server;
  script_model_m(server);
  clef::MockFaults faults;
  faults.noise = 2;
  server.set_faults(faults);
  EvalFiles files;
  const std::string report = fresh_path("repeat_report.json");
  const std::string answers = fresh_path("repeat_answers.jsonl");
  const std::string cache = fresh_path("repeat_cache");
  fresh_path("repeat_answers.repeat2.jsonl");
  fresh_path("repeat_answers.repeat3.jsonl");
  auto r = run_clef(eval_args(server, files,
                              {"-m", "m", "--repeat", "3", "--cache", cache, "--answers", answers,
                               "--report-json", report}));
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.err;
  // Three passes of ten, each sent: the cache answered none from another repeat.
  EXPECT_EQ(server.request_count(), 30);
  // Self-agreement counted by hand from the three answers files.
  const std::string stem = answers.substr(0, answers.size() - 6);
  std::map<std::string, std::set<std::string>> winners;
  for (const std::string& path : {answers, stem + ".repeat2.jsonl", stem + ".repeat3.jsonl"}) {
    const auto lines = lines_of(read_file(path));
    ASSERT_EQ(lines.size(), 10u) << path;
    for (const auto& line : lines)
      winners[line["id"].get<std::string>()].insert(line["answers"]["team"]["winner"]);
  }
  std::size_t same = 0;
  for (const auto& [id, seen] : winners) same += seen.size() == 1;
  const Json team = report_at(report)["models"]["m"]["questions"]["team"];
  EXPECT_EQ(team["repeats"], 3);
  EXPECT_EQ(team["repeat_compared"], 10);
  EXPECT_DOUBLE_EQ(team["self_agreement"]["value"].get<double>(), static_cast<double>(same) / 10);
  EXPECT_EQ(team["repeat_flips"].size(), 10 - same);
  EXPECT_LT(same, 10u);  // noise 2 moves some winners (the seed fixes which)

  // Run again: every pass is answered from its own cache entries, the same report.
  const std::string first = read_file(report);
  for (const std::string& path : {answers, stem + ".repeat2.jsonl", stem + ".repeat3.jsonl"})
    std::remove(path.c_str());
  auto again = run_clef(eval_args(server, files,
                                  {"-m", "m", "--repeat", "3", "--cache", cache, "--answers",
                                   answers, "--report-json", report}));
  EXPECT_EQ(again.code, r.code) << again.err;
  EXPECT_EQ(server.request_count(), 30);
  const Json before = Json::parse(first), after = report_at(report);
  EXPECT_EQ(after["models"]["m"]["questions"]["team"]["self_agreement"],
            before["models"]["m"]["questions"]["team"]["self_agreement"]);
  EXPECT_EQ(after["models"]["m"]["questions"]["team"]["repeat_flips"],
            before["models"]["m"]["questions"]["team"]["repeat_flips"]);
}

TEST(CliEvalProbes, ProbesNeedARun) {
  EvalFiles files;
  auto r = run_clef({"eval", files.data, "-q", files.questions, "--label", "team=team",
                     "--from-results", files.data, "--permute", "3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--permute and --repeat send each item again"), std::string::npos) << r.err;
}

TEST(CliEvalProbes, AProbePassWhoseRequestsFailIsSaidAndExits6) {
  FakeServer server;
  script_model_m(server);
  // The first pass (ten items, calls 0-9) is answered; every later request is refused (400: not
  // retried).
  server.set_script([](const clef::MockRequest&, int call) -> std::optional<clef::MockReply> {
    if (call < 10) return std::nullopt;
    return clef::MockReply{400, R"({"error": "no"})", "application/json", {}, {}, {}};
  });
  EvalFiles files;
  auto r = run_clef(eval_args(server, files, {"-m", "m", "--permute", "2", "-j", "1"}));
  EXPECT_EQ(r.code, 6) << r.err;
  EXPECT_NE(r.err.find("m (order2): 10 of 10 items have no usable answer"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("position (2 orders): flips n/a of 0 items"), std::string::npos) << r.out;
  // The probes' refusals before anything is sent.
  auto yes_no_only = run_clef({"eval", files.data, "--yes-no", "refund: Money back?", "--label",
                               "refund=refund", "--host", server.base_url(), "--permute", "3"});
  EXPECT_EQ(yes_no_only.code, 2);
  EXPECT_NE(yes_no_only.err.find("none is asked"), std::string::npos) << yes_no_only.err;
  auto too_many = run_clef(eval_args(server, files, {"--permute", "3"}));  // team has 2 options
  EXPECT_EQ(too_many.code, 2);
  EXPECT_NE(too_many.err.find("the most: \"team\", 2"), std::string::npos) << too_many.err;
  auto replayed = run_clef(eval_args(server, files, {"--repeat", "2", "--replay", files.data}));
  EXPECT_EQ(replayed.code, 2);
  EXPECT_NE(replayed.err.find("the repeats would not be real"), std::string::npos) << replayed.err;
  EXPECT_EQ(server.request_count(), 20);  // none of the refused runs sent anything
}

TEST(CliDiff, NothingToCompareNeverPasses) {
  FakeServer server;
  script_two_versions(server);
  EvalFiles files;
  const std::string before = fresh_path("nothing_v1.jsonl");
  ASSERT_EQ(run_clef({"batch", files.data, "-q", files.questions, "--host", server.base_url(), "-m",
                      "v1", "-o", before})
                .code,
            0);
  // An AFTER whose every item failed: each line an error, no answer.
  std::string failed;
  for (int i = 1; i <= 10; ++i)
    failed += R"({"id": "T)" + std::to_string(i) + R"(", "error": {"kind": "timeout"}})" + "\n";
  const std::string after = write_temp_file("nothing_failed.jsonl", failed);
  auto r = run_clef({"diff", before, after, "-q", files.questions, "--require", "team.flips <= 0"});
  EXPECT_EQ(r.code, 1) << r.err;  // no flip among nothing compared is not a pass
  EXPECT_NE(r.err.find("team.flips is undefined"), std::string::npos) << r.err;
  auto no_gate = run_clef({"diff", before, after, "-q", files.questions});
  EXPECT_EQ(no_gate.code, 6) << no_gate.err;
  EXPECT_NE(no_gate.err.find("10 items have a result in " + before + " only"), std::string::npos)
      << no_gate.err;

  // Questions neither run answered, or the runs' record names other questions: exit 2.
  auto other = run_clef({"diff", before, before, "--choice", "priority: How soon? | now | later"});
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_NE(other.err.find("asked other questions than these (its run record"), std::string::npos)
      << other.err;
  const std::string bare = write_temp_file("nothing_bare.jsonl", read_file(before));  // no record
  auto unanswered = run_clef({"diff", bare, bare, "--choice", "priority: How soon? | now | later"});
  EXPECT_EQ(unanswered.code, 2) << unanswered.err;
  EXPECT_NE(unanswered.err.find("neither run has an answer to \"priority\""), std::string::npos)
      << unanswered.err;

  // An id on two lines (a resumed run's retry): said, and the last answer counts.
  const auto lines = lines_of(read_file(before));
  const std::string twice =
      write_temp_file("nothing_twice.jsonl", read_file(bare) + lines.front().dump() + "\n");
  auto repeated = run_clef({"diff", bare, twice, "-q", files.questions});
  EXPECT_EQ(repeated.code, 0) << repeated.err;
  EXPECT_NE(repeated.err.find("1 ids are on several lines"), std::string::npos) << repeated.err;
}

TEST(CliDiff, AnInterruptWhileReadingIsAnInterruptNotABadLine) {
  EvalFiles files;
  const std::vector<clef::Question> questions = clef::parse_questions(questions_json).value();
  std::atomic<bool> stop{true};
  std::istringstream in;
  auto read = clef::cli::read_batch_results(files.data, questions, in, &stop);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, clef::ErrorKind::cancelled);
}

}  // namespace
