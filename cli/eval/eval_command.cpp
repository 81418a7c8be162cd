// The implementation of eval_command.hpp: `clef eval`. Data flows one way: DATA's labels, each
// model's typed results, the typed report; JSON, Markdown, HTML and the policy are written from
// it once, at the edge, and the gates read the same report.
#include "eval/eval_command.hpp"
#include "common/flag_rules.hpp"

#include "batch/batch_output.hpp"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>

#include "clef/eval_gates.hpp"
#include "clef/eval_report.hpp"
#include "clef/json.hpp"
#include "clef/probes.hpp"
#include "common/exit_codes.hpp"
#include "common/file_roles.hpp"
#include "common/files.hpp"
#include "common/report_file.hpp"
#include "common/terminal_text.hpp"
#include "eval/eval_data.hpp"
#include "eval/eval_html.hpp"
#include "eval/eval_runs.hpp"
#include "eval/eval_text.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

/// Nothing eval writes (its summary on stdout included) may be a file it reads: a report over
/// the data would replace the labels.
Status check_eval_files(const EvalFlags& flags) {
  std::vector<NamedFile> outputs = {{"stdout", "-"},
                                    {"--answers", flags.answers},
                                    {"--report-json", flags.report_json},
                                    {"--report-md", flags.report_md},
                                    {"--report-html", flags.report_html},
                                    {"--policy-out", flags.policy_out},
                                    {"--record", flags.run.connection.record}};
  // --answers keeps a run record beside it, which its next run reads back.
  if (!flags.answers.empty() && flags.answers != "-")
    outputs.push_back({"--answers' run record", run_record_path(flags.answers)});
  std::vector<NamedFile> inputs = connection_inputs(flags.run.connection);
  inputs.push_back({"DATA", flags.run.input});
  inputs.push_back({"--baseline", flags.baseline});
  for (const auto& file : flags.run.questions.files) inputs.push_back({"--questions", file});
  // A results file's run record is read with it (its model, its questions): never written over.
  for (const auto& file : flags.from_results) {
    inputs.push_back({"--from-results", file});
    if (file != "-") inputs.push_back({"--from-results' run record", run_record_path(file)});
  }
  return check_no_output_is_an_input(outputs, inputs);
}

Status check_eval_flags(const EvalFlags& flags) {
  if (flags.run.input == "-") {
    return usage_error("clef eval reads DATA twice (gold labels, then states): give a file",
                       "DATA");
  }
  if (auto status = check_eval_files(flags); !status) return status;
  if (!flags.from_results.empty() && !flags.answers.empty()) {
    return usage_error(
        "give --answers (run, keeping the results) or --from-results (score "
        "results you have), not both",
        "--from-results");
  }
  if (!flags.from_results.empty() && !flags.models.empty() &&
      flags.models.size() != flags.from_results.size()) {
    return usage_error("give one --model per --from-results file, in the same order", "--model");
  }
  if (!flags.from_results.empty() && (flags.permute > 1 || flags.repeat > 1)) {
    return usage_error(
        "--permute and --repeat send each item again: they need a run, not --from-results",
        flags.permute > 1 ? "--permute" : "--repeat");
  }
  if (flags.repeat > 1 && !flags.run.connection.replay.empty()) {
    return usage_error(
        "--repeat asks the model again: a cassette answers a request with the one recording it "
        "has, so the repeats would not be real (--record works)",
        "--repeat");
  }
  if (!flags.policy_out.empty() && !flags.fit_thresholds) {
    return usage_error("--policy-out writes fitted thresholds: add --fit-thresholds",
                       "--policy-out");
  }
  const std::size_t models =
      std::max<std::size_t>(1, std::max(flags.models.size(), flags.from_results.size()));
  if (!flags.policy_out.empty() && models != 1) {
    return usage_error("a policy holds for one model: give one --model with --policy-out",
                       "--policy-out");
  }
  std::unordered_set<std::string> seen;
  for (const auto& model : flags.models) {
    if (!seen.insert(model).second)
      return usage_error("\"" + model + "\" is given twice", "--model");
  }
  return {};
}

/// The clef-eval/1 report as its file holds it.
std::string report_json_text(const EvalReport& report) {
  return dump_json(to_json(report), 2) + "\n";
}

/// The gates as given, read and checked before anything is sent: a typo in a gate must not
/// cost a whole run.
struct Gates {
  std::vector<Requirement> requirements;
  std::map<std::string, double> tolerances;
  std::optional<EvalBaseline> baseline;
};

Result<EvalBaseline> read_baseline(const std::string& path, const LabelledSet& set,
                                   std::istream& in) {
  auto text = read_file(path, "the baseline report", in);
  if (!text) return text.error();
  auto parsed = parse_json(text.value(), "the baseline report");
  if (!parsed) {
    Error error = parsed.error();
    error.where = path + ": " + error.where;
    return error;
  }
  auto baseline = EvalBaseline::from_json(parsed.value(), set.dataset_sha256, set.questions_sha256);
  if (!baseline) {
    Error error = baseline.error();
    error.where = "--baseline " + path;
    return error;
  }
  return baseline;
}

Result<Gates> read_gates(const EvalFlags& flags, const LabelledSet& set, std::istream& in) {
  Gates gates;
  for (const auto& text : flags.requirements) {
    auto r = parse_requirement(text);
    if (!r) return r.error();
    gates.requirements.push_back(std::move(r).value());
  }
  auto tolerances = parse_tolerances(flags.tolerances);
  if (!tolerances) return tolerances.error();
  gates.tolerances = std::move(tolerances).value();
  if (!flags.tolerances.empty() && flags.baseline.empty()) {
    return usage_error("--tolerance is how far a metric may fall below --baseline: give one",
                       "--tolerance");
  }
  if (flags.baseline.empty()) return gates;
  auto baseline = read_baseline(flags.baseline, set, in);
  if (!baseline) return baseline.error();
  gates.baseline = std::move(baseline).value();
  return gates;
}

/// Prints each failure; exit 1 if any, 2 if a gate names what the report lacks.
int run_gates(const EvalFlags& flags, const Gates& gates, const EvalReport& report,
              const Context& context) {
  auto failures = failed_requirements(gates.requirements, report);
  if (!failures) return cli::report(context, failures.error(), flags.run.connection);
  std::vector<std::string> all = std::move(failures).value();
  if (gates.baseline) {
    auto comparison = compare_to_baseline(report, *gates.baseline, gates.tolerances);
    if (!comparison) {
      Error error = comparison.error();
      error.where = "--baseline " + flags.baseline;
      return cli::report(context, error, flags.run.connection);
    }
    for (const auto& note : comparison->notes)
      context.err << "clef: baseline: " << terminal_safe(note) << "\n";
    for (auto& drop : comparison->drops) all.push_back("worse than the baseline: " + drop);
  }
  for (const auto& failure : all)
    context.err << "clef: requirement failed: " << terminal_safe(failure) << "\n";
  if (all.empty() && (!gates.requirements.empty() || gates.baseline)) {
    context.err << "clef: every requirement holds\n";
  }
  return as_int(all.empty() ? ExitCode::ok : ExitCode::gate_failed);
}

/// Why items failed, per model, before any gate speaks: a gate failing on "no item was answered"
/// needs the reason next to it.
void print_failures(const EvalReport& report, const Context& context) {
  for (const auto& model : report.models) {
    const std::string failures = failure_summary(model);
    if (!failures.empty())
      context.err << "clef: eval: " << terminal_safe(model.model + ": " + failures) << "\n";
  }
}

/// --permute N needs a question whose options have an order, and one with N orders of them.
Status check_permutable(const EvalFlags& flags, const std::vector<Question>& asked) {
  if (flags.permute <= 1) return {};
  std::size_t most = 1;
  std::string widest;
  for (const auto& question : asked) {
    if (distinct_orders(question) > most) {
      most = distinct_orders(question);
      widest = question.name;
    }
  }
  if (most == 1) {
    return usage_error(
        "--permute reorders the options of choice and score questions, and none is asked (a "
        "yes/no question's meanings have no order on the wire)",
        "--permute");
  }
  if (flags.permute > most) {
    return usage_error("--permute " + std::to_string(flags.permute) +
                           ": no question has that many orders of its options (the most: \"" +
                           widest + "\", " + std::to_string(most) + ")",
                       "--permute");
  }
  return {};
}

/// The items of one pass without a result whose answers are all usable, as clef batch counts
/// its items ok (batch_output's all_answered): a failed request, an invalid, refused or missing
/// answer, an item the results file lacks.
std::size_t unanswered(const std::vector<std::optional<ItemResult>>& items) {
  std::size_t count = 0;
  for (const auto& item : items)
    count += !item || !item->decision || !all_answered(*item->decision);
  return count;
}

/// Every pass of every model answered every item; the probes' passes that did not are said on
/// stderr (the report's figures are the first pass's).
bool every_item_answered(const std::vector<ModelResults>& models, const Context& context) {
  bool all = true;
  for (const auto& model : models) {
    all = all && unanswered(model.items) == 0;
    const auto say = [&](const std::vector<ProbeRun>& passes, const char* name) {
      for (std::size_t k = 0; k < passes.size(); ++k) {
        const std::size_t missing = unanswered(passes[k].items);
        if (missing == 0) continue;
        all = false;
        context.err << "clef: eval: " << terminal_safe_line(model.model) << " (" << name << k + 2
                    << "): " << missing << " of " << passes[k].items.size()
                    << " items have no usable answer: the probes leave them out\n";
      }
    };
    say(model.permuted, "order");
    say(model.repeated, "repeat");
  }
  return all;
}

/// The report files asked for, and the policy: written once, from the typed report.
Status write_reports(const EvalFlags& flags, const EvalReport& report) {
  struct Output {
    const std::string& path;
    std::string (*render)(const EvalReport&);
    const char* what;
  };
  for (const Output& output : {Output{flags.report_json, report_json_text, "the JSON report"},
                               Output{flags.report_md, report_markdown, "the Markdown report"},
                               Output{flags.report_html, report_html, "the HTML report"}}) {
    if (output.path.empty()) continue;
    if (auto status = write_report(output.path, output.render(report), output.what); !status)
      return status;
  }
  if (flags.policy_out.empty()) return {};
  const Policy policy = policy_of(report, report.models.front());
  return write_report(flags.policy_out, policy.to_json(), "the policy");
}

/// DATA's format, which must carry gold labels.
Result<InputFormat> data_format(const EvalFlags& flags, const Context& context) {
  std::string recognised_by;
  auto format = flags.run.input_format.empty()
                    ? Result<InputFormat>(guess_input_format(flags.run.input, &recognised_by))
                    : parse_input_format(flags.run.input_format);
  if (format && !recognised_by.empty())
    note_input_format(context, flags.run.input, format.value(), recognised_by);
  if (format && format.value() == InputFormat::text) {
    return usage_error(
        "clef eval needs JSONL or CSV/TSV data (text lines have no gold labels); name the "
        "format with --input-format",
        flags.run.input);
  }
  return format;
}

}  // namespace

CLI::App* add_eval_command(CLI::App& app, EvalFlags& flags) {
  CLI::App* eval = app.add_subcommand(
      "eval", "Measure models on labelled items: accuracy, F1, calibration, thresholds, gates");
  eval->footer(
      "Examples:\n"
      "  clef eval labelled.jsonl -q questions.json --label team=gold_team -m clef-flash -m clef\n"
      "  clef eval labelled.jsonl -q questions.json --label team=gold_team \\\n"
      "    --report-json report.json --require 'team.accuracy >= 0.9'\n");
  eval->add_option("DATA", flags.run.input, "Labelled items: JSONL or CSV/TSV, as clef batch reads")
      ->required();
  add_batch_run_flags(*eval, flags.run);
  // One --model per model to evaluate, on the same items.
  eval->remove_option(eval->get_option("--model"));
  eval->add_option("-m,--model", flags.models,
                   "Model to evaluate (repeat to compare models on the same items; default "
                   "clef-flash)");
  eval->add_option("--label", flags.labels,
                   "QUESTION=FIELD: the field or column with QUESTION's gold answer (repeatable)")
      ->required();
  eval->add_option("--answers", flags.answers,
                   "Keep the raw results in FILE (FILE.MODEL with several models); the next call "
                   "re-scores them and sends only what is missing");
  eval->add_option("--from-results", flags.from_results,
                   "Score `clef batch` output FILE instead of sending (repeat per --model)");
  eval->add_option("--report-json", flags.report_json, "Write the clef-eval/1 report to FILE");
  eval->add_option("--report-md", flags.report_md, "Write a Markdown summary to FILE");
  eval->add_option("--report-html", flags.report_html,
                   "Write a self-contained HTML report (inline SVG charts) to FILE");
  eval->add_flag("--fit-thresholds", flags.fit_thresholds,
                 "Fit per-question and per-label confidence thresholds on half the items, check "
                 "them on the other half");
  eval->add_option("--target-precision", flags.target_precision,
                   "With --fit-thresholds: the precision a threshold must reach (one-sided 95% "
                   "Wilson lower bound)")
      ->check(finite_number() & CLI::Range(0.0, 1.0))
      ->capture_default_str();
  eval->add_option("--policy-out", flags.policy_out,
                   "With --fit-thresholds: write the thresholds as a policy file for "
                   "`clef ask/batch --policy`");
  eval->add_option("--require", flags.requirements,
                   "Gate: exit 1 unless it holds for every model, e.g. 'team.accuracy >= 0.9', "
                   "'lower(team.precision[billing]) >= 0.95' (repeatable)");
  eval->add_option("--permute", flags.permute,
                   "Probe position bias: send each item with its choice and score options in N "
                   "orders in all (the first as asked; N x the requests)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{50}));
  eval->add_option("--permute-seed", flags.permute_seed,
                   "With --permute: draws the orders past the rotations")
      ->capture_default_str();
  eval->add_option("--repeat", flags.repeat,
                   "Probe self-consistency: send each item K times in all, each repeat with its "
                   "own cache entries (K x the requests)")
      ->type_name("K")
      ->check(CLI::Range(std::size_t{1}, std::size_t{50}));
  eval->add_option("--baseline", flags.baseline,
                   "Gate: exit 1 if a metric is worse than in this earlier --report-json");
  eval->add_option("--tolerance", flags.tolerances,
                   "With --baseline: METRIC=DELTA (or DELTA for all) a metric may lose");
  return eval;
}

int run_eval(EvalFlags flags, const CLI::App& command, const Context& context) {
  flags.run.output_format = "jsonl";
  auto fail = [&](const Error& error) { return cli::report(context, error, flags.run.connection); };
  if (auto status = check_eval_flags(flags); !status) return fail(status.error());
  auto labels = parse_labels(flags.labels);
  if (!labels) return fail(labels.error());
  auto asked = collect_questions(flags.run.questions, command);
  if (!asked) return fail(asked.error());
  if (auto status = check_permutable(flags, asked.value()); !status) return fail(status.error());
  auto format = data_format(flags, context);
  if (!format) return fail(format.error());
  auto set = read_labelled_set(flags.run, format.value(), asked.value(), labels.value());
  if (!set) return fail(set.error());
  auto gates = read_gates(flags, set.value(), context.in);
  if (!gates) return fail(gates.error());
  if (auto status = check_requirements(gates->requirements, set.value(),
                                       {flags.fit_thresholds, flags.target_precision},
                                       {flags.permute > 1, flags.repeat > 1});
      !status) {
    return fail(status.error());
  }

  auto results =
      collect_results(flags, command, asked.value(), format.value(), set.value(), context);
  if (!results) return fail(results.error());
  if (results->stopped) return *results->stopped;

  const EvalReport report =
      evaluate_models(set.value(), results->models, {flags.fit_thresholds, flags.target_precision});
  print_eval_summary(context.out, report, context.color);
  print_failures(report, context);
  const bool answered = every_item_answered(results->models, context);
  if (auto status = write_reports(flags, report); !status) {
    print_error(context, status.error().message + " (" + status.error().where + ")");
    return as_int(status.error().kind == ErrorKind::cancelled ? ExitCode::interrupted
                                                              : ExitCode::output);
  }
  const int gated = run_gates(flags, gates.value(), report, context);
  if (gated != as_int(ExitCode::ok)) return gated;
  // As clef batch: an item without a usable answer (a mistyped model fails them all) is exit 6,
  // even with no gate to fail on it.
  return as_int(answered ? ExitCode::ok : ExitCode::partial_failure);
}

}  // namespace clef::cli
