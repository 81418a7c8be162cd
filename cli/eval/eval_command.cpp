// The implementation of eval_command.hpp: `clef eval`.
#include "eval/eval_command.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_set>

#include "batch/batch_input.hpp"
#include "batch/batch_output.hpp"
#include "batch/batch_results.hpp"
#include "clef/digest.hpp"
#include "clef/eval.hpp"
#include "clef/json.hpp"
#include "clef/policy.hpp"
#include "common/exit_codes.hpp"
#include "common/files.hpp"
#include "common/terminal_text.hpp"
#include "eval/eval_gates.hpp"
#include "eval/eval_html.hpp"
#include "eval/eval_report.hpp"
#include "eval/eval_text.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

Error usage_error(const std::string& message, const std::string& where) {
  return make_error(ErrorKind::invalid_input, message, where);
}

/// A directory for the answers of a run without --answers, removed with everything in it.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/clef-eval-XXXXXX";
    if (::mkdtemp(pattern.data())) m_path = pattern;
  }
  ~ScratchDirectory() {
    for (const auto& file : m_files) ::unlink(file.c_str());
    if (!m_path.empty()) ::rmdir(m_path.c_str());
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  bool ok() const { return !m_path.empty(); }
  std::string file(const std::string& name) {
    const std::string path = m_path + "/" + name;
    m_files.push_back(path);
    m_files.push_back(run_record_path(path));
    return path;
  }

 private:
  std::string m_path;
  std::vector<std::string> m_files;
};

/// `answers.jsonl` for one model; `answers.MODEL.jsonl` when several share the flag.
std::string answers_path(const std::string& path, const std::string& model, bool several) {
  if (!several) return path;
  std::string safe;
  for (char c : model)
    safe +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_') ? c : '_';
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return path + "." + safe;
  return path.substr(0, dot) + "." + safe + path.substr(dot);
}

Result<std::string> file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return usage_error("cannot open the data", path);
  Sha256Hasher hasher;
  std::string buffer(1 << 16, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) return usage_error("cannot read the data", path);
  return hasher.hex();
}

struct LabelFlag {
  std::string question;
  std::string field;
};

Result<std::vector<LabelFlag>> parse_labels(const std::vector<std::string>& flags) {
  std::vector<LabelFlag> out;
  for (const auto& flag : flags) {
    const auto equals = flag.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == flag.size()) {
      return usage_error("\"" + flag + "\": write --label QUESTION=FIELD", "--label");
    }
    for (const auto& seen : out) {
      if (seen.question == flag.substr(0, equals)) {
        return usage_error("question \"" + seen.question + "\" is labelled twice", "--label");
      }
    }
    out.push_back({flag.substr(0, equals), flag.substr(equals + 1)});
  }
  if (out.empty()) {
    return usage_error(
        "nothing to score: give --label QUESTION=FIELD for each question whose "
        "gold answer is in DATA",
        "--label");
  }
  return out;
}

/// Reads DATA's ids and gold labels. Every row must be readable, every id unique and every
/// gold a valid answer: a report over a broken dataset would be wrong without saying so.
Result<EvalData> read_data(const EvalFlags& flags, InputFormat format,
                           const std::vector<Question>& asked,
                           const std::vector<LabelFlag>& labels) {
  EvalData data;
  InputFields fields{flags.run.id_field, flags.run.state_field, flags.run.state_columns, {}};
  for (const auto& label : labels) {
    const Question* question = nullptr;
    for (const auto& q : asked)
      if (q.name == label.question) question = &q;
    if (!question) {
      return usage_error("\"" + label.question + "\" is not one of the questions", "--label");
    }
    data.questions.push_back(*question);
    fields.extra.push_back(label.field);
  }
  std::ifstream file(flags.run.input, std::ios::binary);
  if (!file) return usage_error("cannot open the data", flags.run.input);
  auto reader = make_reader(file, format, fields);
  if (!reader) {
    Error error = reader.error();
    error.where = flags.run.input + ": " + error.where;
    return error;
  }
  std::unordered_set<std::string> seen;
  while (auto item = reader.value()->next()) {
    const std::string where = flags.run.input + ": line " + std::to_string(item->line);
    if (!item->state) {
      Error error = item->state.error();
      error.where = flags.run.input + ": " + error.where;
      return error;
    }
    EvalItem entry{id_key(item->id), {}};
    if (!seen.insert(entry.key).second) {
      return usage_error("the id " + entry.key + " is used twice: each item needs its own id",
                         where);
    }
    for (std::size_t q = 0; q < labels.size(); ++q) {
      auto gold = gold_label(data.questions[q], item->extra[q]);
      if (!gold) return usage_error(gold.error().message, where + ", " + labels[q].field);
      entry.gold.push_back(std::move(gold).value());
    }
    data.items.push_back(std::move(entry));
  }
  if (data.items.empty()) return usage_error("the data has no items", flags.run.input);
  auto dataset = file_sha256(flags.run.input);
  if (!dataset) return dataset.error();
  data.dataset_sha256 = dataset.value();
  auto questions = questions_sha256(asked);
  if (!questions) return questions.error();
  data.questions_sha256 = questions.value();
  return data;
}

Status check_eval_flags(const EvalFlags& flags) {
  if (flags.run.input == "-") {
    return usage_error("clef eval reads DATA twice (gold labels, then states): give a file",
                       "DATA");
  }
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

/// The model a --from-results file answered with: --model, else what its lines say.
std::string results_model(const BatchResults& results, const std::string& path) {
  for (const auto& [key, record] : results) {
    if (record.decision && !record.decision->model.empty()) return record.decision->model;
  }
  return path;
}

/// Runs DATA through `clef batch` for each model into its answers file (resumed when it
/// exists) and reads the results back. A batch exit other than 0 or 6 ends the evaluation.
Result<std::vector<ModelRun>> collect_runs(const EvalFlags& flags, const CLI::App& command,
                                           const std::vector<Question>& asked,
                                           const Context& context, int& exit_code) {
  std::vector<ModelRun> runs;
  if (!flags.from_results.empty()) {
    for (std::size_t i = 0; i < flags.from_results.size(); ++i) {
      auto results = read_batch_results(flags.from_results[i], asked, context.in);
      if (!results) return results.error();
      std::string model = flags.models.empty()
                              ? results_model(results.value(), flags.from_results[i])
                              : flags.models[i];
      runs.push_back({std::move(model), std::move(results).value()});
    }
    return runs;
  }
  ScratchDirectory scratch;
  const std::vector<std::string> models =
      flags.models.empty() ? std::vector<std::string>{flags.run.connection.model} : flags.models;
  for (const auto& model : models) {
    BatchFlags run = flags.run;
    run.connection.model = model;
    if (flags.answers.empty()) {
      if (!scratch.ok()) return usage_error("cannot make a scratch directory", "TMPDIR");
      run.output = scratch.file("answers-" + std::to_string(runs.size()) + ".jsonl");
    } else {
      run.output = answers_path(flags.answers, model, models.size() > 1);
    }
    std::ifstream existing(run.output);
    run.resume = existing.good() && existing.peek() != std::ifstream::traits_type::eof();
    context.err << "clef: eval: " << model << (run.resume ? ": resuming " + run.output : "")
                << "\n";
    const int code = run_batch_command(run, command, context);
    if (code != as_int(ExitCode::ok) && code != as_int(ExitCode::partial_failure)) {
      if (code == as_int(ExitCode::usage) && run.resume) {
        context.err << "clef: eval: " << run.output
                    << " holds the answers of another run (other questions, model, server or "
                       "data): give another --answers, or delete it to start again\n";
      }
      exit_code = code;
      return runs;
    }
    auto results = read_batch_results(run.output, asked, context.in);
    if (!results) return results.error();
    runs.push_back({model, std::move(results).value()});
  }
  return runs;
}

Status write_text(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return make_error(ErrorKind::invalid_input, std::string("cannot write ") + what, path);
  return {};
}

Result<nlohmann::json> read_report(const std::string& path, std::istream& in) {
  auto text = read_file(path, "the baseline report", in);
  if (!text) return text.error();
  auto parsed = parse_json(text.value(), "the baseline report");
  if (!parsed) {
    Error error = parsed.error();
    error.where = path + ": " + error.where;
    return error;
  }
  // The gates read sorted std::map objects, the same type the report is built as.
  return nlohmann::json::parse(dump_json(parsed.value()), nullptr, false);
}

Policy policy_from(const nlohmann::json& report, const EvalData& data, const ModelRun& run,
                   double target) {
  Policy policy;
  policy.model = run.model;
  policy.target_precision = target;
  policy.dataset_sha256 = data.dataset_sha256;
  policy.questions_sha256 = data.questions_sha256;
  const auto& fitted = report["models"][run.model]["thresholds"]["questions"];
  auto threshold = [](const nlohmann::json& entry) {
    const auto& t = entry["threshold"];
    return t.is_number() ? std::optional<double>(t.get<double>()) : std::nullopt;
  };
  for (const auto& [name, entry] : fitted.items()) {
    QuestionPolicy question;
    question.threshold = threshold(entry);
    if (entry.contains("labels")) {
      // A label without enough items of its own to prove the target falls back to the
      // question's threshold instead of abstaining on every answer it wins.
      for (const auto& [label, t] : entry["labels"].items()) {
        if (threshold(t)) question.labels[label] = threshold(t);
      }
    }
    policy.questions[name] = std::move(question);
  }
  return policy;
}

/// The gates as given, read and checked before anything is sent: a typo in a gate must not
/// cost a whole run.
struct Gates {
  std::vector<Requirement> requirements;
  std::map<std::string, double> tolerances;
  std::optional<nlohmann::json> baseline;
};

Result<Gates> read_gates(const EvalFlags& flags, const EvalData& data, std::istream& in) {
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
  auto baseline = read_report(flags.baseline, in);
  if (!baseline) return baseline.error();
  if (auto status = check_baseline(baseline.value(), data.dataset_sha256, data.questions_sha256);
      !status) {
    Error error = status.error();
    error.where = "--baseline " + flags.baseline;
    return error;
  }
  gates.baseline = std::move(baseline).value();
  return gates;
}

/// Prints each failure; exit 1 if any, 2 if a gate names what the report lacks.
int run_gates(const EvalFlags& flags, const Gates& gates, const nlohmann::json& report,
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
void print_failures(const nlohmann::json& report, const Context& context) {
  for (const std::string& name : model_order(report)) {
    const std::string failures = failure_summary(report["models"][name]);
    if (!failures.empty())
      context.err << "clef: eval: " << terminal_safe(name + ": " + failures) << "\n";
  }
}

}  // namespace

CLI::App* add_eval_command(CLI::App& app, EvalFlags& flags) {
  CLI::App* eval = app.add_subcommand(
      "eval", "Measure models on labelled items: accuracy, F1, calibration, thresholds, gates");
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
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  eval->add_option("--policy-out", flags.policy_out,
                   "With --fit-thresholds: write the thresholds as a policy file for "
                   "`clef ask/batch --policy`");
  eval->add_option("--require", flags.requirements,
                   "Gate: exit 1 unless it holds for every model, e.g. 'team.accuracy >= 0.9', "
                   "'lower(team.precision[billing]) >= 0.95' (repeatable)");
  eval->add_option("--baseline", flags.baseline,
                   "Gate: exit 1 if a metric is worse than in this earlier --report-json");
  eval->add_option("--tolerance", flags.tolerances,
                   "With --baseline: METRIC=DELTA (or DELTA for all) a metric may lose");
  return eval;
}

int run_eval(EvalFlags flags, const CLI::App& command, const Context& context) {
  flags.run.output_format = "jsonl";
  if (auto status = check_eval_flags(flags); !status)
    return cli::report(context, status.error(), flags.run.connection);
  auto labels = parse_labels(flags.labels);
  if (!labels) return cli::report(context, labels.error(), flags.run.connection);
  auto asked = collect_questions(flags.run.questions, command);
  if (!asked) return cli::report(context, asked.error(), flags.run.connection);
  auto format = flags.run.input_format.empty()
                    ? Result<InputFormat>(guess_input_format(flags.run.input))
                    : parse_input_format(flags.run.input_format);
  if (!format) return cli::report(context, format.error(), flags.run.connection);
  if (format.value() == InputFormat::text) {
    return cli::report(context,
                       usage_error("clef eval needs JSONL or CSV/TSV data (text lines have no gold "
                                   "labels); name the format with --input-format",
                                   flags.run.input),
                       flags.run.connection);
  }
  auto data = read_data(flags, format.value(), asked.value(), labels.value());
  if (!data) return cli::report(context, data.error(), flags.run.connection);
  auto gates = read_gates(flags, data.value(), context.in);
  if (!gates) return cli::report(context, gates.error(), flags.run.connection);

  int batch_exit = as_int(ExitCode::ok);
  auto runs = collect_runs(flags, command, asked.value(), context, batch_exit);
  if (!runs) return cli::report(context, runs.error(), flags.run.connection);
  if (batch_exit != as_int(ExitCode::ok)) return batch_exit;

  const nlohmann::json report =
      build_report(data.value(), runs.value(), {flags.fit_thresholds, flags.target_precision});
  print_eval_summary(context.out, report, context.color);
  print_failures(report, context);
  struct Output {
    const std::string& path;
    std::string (*render)(const nlohmann::json&);
    const char* what;
  };
  for (const Output& output : {Output{flags.report_json, report_text, "the JSON report"},
                               Output{flags.report_md, report_markdown, "the Markdown report"},
                               Output{flags.report_html, report_html, "the HTML report"}}) {
    if (output.path.empty()) continue;
    if (auto status = write_text(output.path, output.render(report), output.what); !status) {
      print_error(context, status.error().message + " (" + status.error().where + ")");
      return as_int(ExitCode::output);
    }
  }
  if (!flags.policy_out.empty()) {
    const Policy policy = policy_from(report, data.value(), runs->front(), flags.target_precision);
    if (auto status = write_text(flags.policy_out, policy.to_json(), "the policy"); !status) {
      print_error(context, status.error().message + " (" + status.error().where + ")");
      return as_int(ExitCode::output);
    }
  }
  return run_gates(flags, gates.value(), report, context);
}

}  // namespace clef::cli
