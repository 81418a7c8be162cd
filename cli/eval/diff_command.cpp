// The implementation of diff_command.hpp: both outputs read back against the questions, compared
// item by item (clef::compare_runs), printed, written as clef-diff/1 and gated.
#include "eval/diff_command.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "batch/batch_output.hpp"
#include "batch/batch_results.hpp"
#include "clef/drift.hpp"
#include "clef/json.hpp"
#include "common/exit_codes.hpp"
#include "common/file_roles.hpp"
#include "common/files.hpp"
#include "common/input_file.hpp"
#include "common/number_text.hpp"
#include "common/report_file.hpp"
#include "common/terminal_text.hpp"
#include "eval/eval_text.hpp"
#include "output/error_report.hpp"

namespace clef::cli {
namespace {

/// One run read back: its results by id key, and the keys in the order the file names them.
struct Run {
  BatchResults results;
  std::vector<std::string> order;
  std::size_t repeated_ids = 0;  ///< Ids on more than one line (the last answer counts).
  std::string model_version;     ///< What its run record names ("" when it has none).
};

/// Drops every repeat of a key, keeping its first place; returns how many keys had repeats.
std::size_t keep_first_of_each(std::vector<std::string>& keys) {
  std::unordered_map<std::string, std::size_t> seen;
  std::vector<std::string> kept;
  for (auto& key : keys)
    if (seen[key]++ == 0) kept.push_back(std::move(key));
  keys = std::move(kept);
  std::size_t repeated = 0;
  for (const auto& [key, count] : seen) repeated += count > 1;
  return repeated;
}

/// What the run record clef batch writes beside an output says: the model's version, and its
/// questions, which must be these (read against other questions, its answers would be counted
/// under the wrong labels).
Status read_run_record(const std::string& path, const std::vector<Question>& asked,
                       std::istream& in, Run& run) {
  const std::string record_path = run_record_path(path);
  if (path == "-" || path_kind(record_path) != PathKind::regular) return {};
  auto text = read_file(record_path, "the run record", in);
  if (!text) return {};
  auto record = parse_json(text.value(), "the run record");
  if (!record || !record->is_object()) return {};
  const auto version = record->find("model_version");
  if (version != record->end() && version->is_string()) run.model_version = *version;
  if (!record->contains("questions_sha256")) return {};
  auto digest = questions_sha256(asked);
  if (!digest) return digest.error();
  if ((*record)["questions_sha256"] == digest.value()) return {};
  return make_error(ErrorKind::invalid_input,
                    "this run asked other questions than these (its run record " + record_path +
                        " has another questions_sha256): give the questions both runs asked",
                    path);
}

Result<Run> read_run(const std::string& path, const std::vector<Question>& asked,
                     const Context& context) {
  Run run;
  if (auto same = read_run_record(path, asked, context.in, run); !same) return same.error();
  auto results = read_batch_results(path, asked, context.in, context.stop, &run.order);
  if (!results) return results.error();
  run.results = std::move(results).value();
  run.repeated_ids = keep_first_of_each(run.order);
  return run;
}

bool digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

/// "T-9" before "T-10": runs of digits compare as numbers (leading zeros ignored), the rest
/// byte by byte. One pass over both texts.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      while (i < a.size() && a[i] == '0') ++i;
      while (j < b.size() && b[j] == '0') ++j;
      const std::size_t start_a = i, start_b = j;
      while (i < a.size() && digit(a[i])) ++i;
      while (j < b.size() && digit(b[j])) ++j;
      const std::string_view x(a.data() + start_a, i - start_a), y(b.data() + start_b, j - start_b);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // equal but for leading zeros: any fixed order
}

/// Every item either run has, in the ids' natural order: a batch writes in the order answers
/// arrive, so neither file's order means anything, and the report must not change with it.
std::vector<std::string> item_ids(const Run& a, const Run& b) {
  std::vector<std::string> ids = a.order;
  for (const auto& id : b.order)
    if (!a.results.count(id)) ids.push_back(id);
  std::sort(ids.begin(), ids.end(), natural_less);
  return ids;
}

std::vector<std::optional<Decision>> decisions_of(const Run& run,
                                                  const std::vector<std::string>& ids) {
  std::vector<std::optional<Decision>> decisions;
  decisions.reserve(ids.size());
  for (const auto& id : ids) {
    const auto found = run.results.find(id);
    decisions.push_back(found == run.results.end() ? std::nullopt : found->second.decision);
  }
  return decisions;
}

std::string percent(const metrics::Interval& interval) {
  return fixed(interval.value * 100, 1) + "% [" + fixed(interval.low * 100, 1) + "%, " +
         fixed(interval.high * 100, 1) + "%]";
}

std::string side(const std::string& name, const std::string& model) {
  return model.empty() ? name : name + " (" + model + ")";
}

void print_question(std::ostream& out, const QuestionDrift& q, std::size_t show) {
  out << "  " << terminal_safe_line(q.question) << " (" << type_name(q.type) << "): ";
  if (q.type == QuestionType::box) {
    out << "not compared (a box has no winner to count)\n";
    return;
  }
  if (!q.agreement) {
    out << "no item answered in both runs\n";
    return;
  }
  out << (q.compared - q.flips.size()) << " of " << q.compared << " agree ("
      << percent(*q.agreement) << "), JS divergence " << fixed(q.js_divergence, 4) << ", mean |Δp| "
      << fixed(q.mean_abs_delta_p, 4) << "\n    winners:";
  const char* separator = " ";
  for (const auto& [winner, count] : q.winners) {
    out << separator << terminal_safe_line(winner) << " " << count.a << " → " << count.b;
    separator = ", ";
  }
  out << "\n";
  if (q.only_a + q.only_b > 0)
    out << "    answered in one run only: " << q.only_a << " in A, " << q.only_b << " in B\n";
  for (std::size_t i = 0; i < q.flips.size() && i < show; ++i) {
    const Flip& flip = q.flips[i];
    out << "    " << terminal_safe_line(flip.id) << ": " << terminal_safe_line(flip.winner_a) << " "
        << fixed(flip.probability_a, 2) << " → " << terminal_safe_line(flip.winner_b) << " "
        << fixed(flip.probability_b, 2) << "\n";
  }
  if (q.flips.size() > show)
    out << "    ... and " << (q.flips.size() - show) << " more (--show, --report-json)\n";
}

void print_drift(std::ostream& out, const RunDrift& drift, std::size_t show) {
  out << "clef diff: " << terminal_safe_line(side(drift.name_a, drift.model_a)) << " → "
      << terminal_safe_line(side(drift.name_b, drift.model_b)) << "\n";
  if (!drift.model_version_a.empty() || !drift.model_version_b.empty()) {
    const auto version = [](const std::string& v) { return v.empty() ? "not recorded" : v; };
    out << "  model version: " << terminal_safe_line(version(drift.model_version_a)) << " → "
        << terminal_safe_line(version(drift.model_version_b))
        << (drift.model_version_a == drift.model_version_b ? " (the same)" : "") << "\n";
  }
  out << "  items: " << drift.items_a << " in A, " << drift.items_b << " in B, " << drift.common
      << " in both\n";
  for (const auto& q : drift.questions) print_question(out, q, show);
  if (drift.agreement) {
    out << "  overall: " << percent(*drift.agreement)
        << " of the items answered on every question agree on all of them\n";
  }
}

Status check_diff_flags(const DiffFlags& flags) {
  std::vector<NamedFile> outputs = {{"stdout", "-"}, {"--report-json", flags.report_json}};
  std::vector<NamedFile> inputs = {{"BEFORE", flags.before}, {"AFTER", flags.after}};
  // Each run's record beside it says its model version: read too, never to be written over.
  for (const auto& [role, path] : {std::pair{"BEFORE's run record", &flags.before},
                                   std::pair{"AFTER's run record", &flags.after}}) {
    if (*path != "-") inputs.push_back({role, run_record_path(*path)});
  }
  for (const auto& file : flags.questions.files) inputs.push_back({"--questions", file});
  if (flags.before == "-" && flags.after == "-") {
    return make_error(ErrorKind::invalid_input, "stdin can be only one of the two runs", "AFTER");
  }
  return check_no_output_is_an_input(outputs, inputs);
}

Result<std::vector<Requirement>> read_requirements(const std::vector<std::string>& texts) {
  std::vector<Requirement> requirements;
  for (const auto& text : texts) {
    auto r = parse_requirement(text);
    if (!r) return r.error();
    requirements.push_back(std::move(r).value());
  }
  return requirements;
}

int fail(const Context& context, const Error& error) {
  print_error(context, error.message + " (" + error.where + ")");
  return as_int(error.kind == ErrorKind::cancelled ? ExitCode::interrupted : ExitCode::usage);
}

/// A question neither run answered was not what they asked: exit 2 before anything is printed.
Status check_questions_answered(const RunDrift& drift) {
  for (const auto& q : drift.questions) {
    if (q.type == QuestionType::box || q.compared + q.only_a + q.only_b > 0) continue;
    return make_error(ErrorKind::invalid_input,
                      "neither run has an answer to \"" + q.question +
                          "\" that fits it (its type and options): give the questions the runs "
                          "asked",
                      "--questions");
  }
  return {};
}

/// What the comparison leaves out, said on stderr: items in one run only, ids on several lines.
/// True when any item was left out (exit 6, as clef batch and eval count an unanswered item).
bool warn_left_out(const RunDrift& drift, const Run& a, const Run& b, const Context& context) {
  bool left_out = drift.items_a != drift.common || drift.items_b != drift.common;
  if (left_out) {
    context.err << "clef: diff: " << drift.items_a - drift.common << " items have a result in "
                << terminal_safe_line(drift.name_a) << " only and " << drift.items_b - drift.common
                << " in " << terminal_safe_line(drift.name_b) << " only: not compared\n";
  }
  for (const auto& q : drift.questions) {
    if (q.only_a + q.only_b == 0) continue;
    left_out = true;
    context.err << "clef: diff: " << terminal_safe_line(q.question) << ": " << q.only_a + q.only_b
                << " items have a usable answer in one run only (a failed request, a refused or "
                   "invalid answer): not compared\n";
  }
  for (const auto& [run, name] :
       {std::pair<const Run*, const std::string*>{&a, &drift.name_a}, {&b, &drift.name_b}}) {
    if (run->repeated_ids == 0) continue;
    context.err << "clef: diff: " << terminal_safe_line(*name) << ": " << run->repeated_ids
                << " ids are on several lines (a resumed run's retries): the last answer of "
                   "each counts\n";
  }
  return left_out;
}

/// Prints each failed requirement; exit 1 if any, 2 if one names what the comparison lacks.
int run_gates(const std::vector<Requirement>& requirements, const RunDrift& drift,
              const Context& context) {
  auto failures = failed_drift_requirements(requirements, drift);
  if (!failures) return fail(context, failures.error());
  for (const auto& failure : failures.value())
    context.err << "clef: requirement failed: " << terminal_safe(failure) << "\n";
  if (failures->empty() && !requirements.empty()) context.err << "clef: every requirement holds\n";
  return as_int(failures->empty() ? ExitCode::ok : ExitCode::gate_failed);
}

}  // namespace

CLI::App* add_diff_command(CLI::App& app, DiffFlags& flags) {
  CLI::App* diff = app.add_subcommand(
      "diff",
      "Compare two `clef batch` outputs over the same items, with no labels: agreement, "
      "the items that changed, the shift in winners");
  diff->footer(
      "Examples:\n"
      "  clef diff monday.jsonl tuesday.jsonl -q questions.json\n"
      "  clef diff old.jsonl new.jsonl -q questions.json --require 'team.agreement >= 0.95' \\\n"
      "    --report-json drift.json\n");
  diff->add_option("BEFORE", flags.before, "Run A: a `clef batch` output ('-' = stdin)")
      ->required();
  diff->add_option("AFTER", flags.after, "Run B: the output to compare with it ('-' = stdin)")
      ->required();
  add_question_flags(*diff, flags.questions);
  diff->add_option("--require", flags.requirements,
                   "Gate: exit 1 unless it holds, e.g. 'team.agreement >= 0.95', "
                   "'team.js_divergence <= 0.01', 'lower(overall.agreement) >= 0.9' (repeatable)");
  diff->add_option("--report-json", flags.report_json,
                   "Write the clef-diff/1 report (every changed item) to FILE");
  diff->add_option("--show", flags.show, "Changed items listed per question on stdout")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  return diff;
}

int run_diff(const DiffFlags& flags, const CLI::App& command, const Context& context) {
  if (auto status = check_diff_flags(flags); !status) return fail(context, status.error());
  auto requirements = read_requirements(flags.requirements);
  if (!requirements) return fail(context, requirements.error());
  auto asked = collect_questions(flags.questions, command);
  if (!asked) return fail(context, asked.error());
  auto before = read_run(flags.before, asked.value(), context);
  if (!before) return fail(context, before.error());
  auto after = read_run(flags.after, asked.value(), context);
  if (!after) return fail(context, after.error());

  const std::vector<std::string> ids = item_ids(before.value(), after.value());
  RunDrift drift = compare_runs(asked.value(), ids, decisions_of(before.value(), ids),
                                decisions_of(after.value(), ids));
  drift.name_a = flags.before == "-" ? "stdin" : flags.before;
  drift.name_b = flags.after == "-" ? "stdin" : flags.after;
  drift.model_version_a = before->model_version;
  drift.model_version_b = after->model_version;
  if (auto answered = check_questions_answered(drift); !answered)
    return fail(context, answered.error());
  if (context.stop && context.stop->load())
    return fail(context, make_error(ErrorKind::cancelled, "interrupted", "clef diff"));
  print_drift(context.out, drift, flags.show);
  const bool left_out = warn_left_out(drift, before.value(), after.value(), context);
  if (!flags.report_json.empty()) {
    auto written =
        write_report(flags.report_json, dump_json(to_json(drift), 2) + "\n", "the JSON report");
    if (!written) {
      print_error(context, written.error().message + " (" + written.error().where + ")");
      return as_int(written.error().kind == ErrorKind::cancelled ? ExitCode::interrupted
                                                                 : ExitCode::output);
    }
  }
  const int gated = run_gates(requirements.value(), drift, context);
  if (gated != as_int(ExitCode::ok)) return gated;
  return as_int(left_out ? ExitCode::partial_failure : ExitCode::ok);
}

}  // namespace clef::cli
