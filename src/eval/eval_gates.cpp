// The implementation of eval_gates.hpp, its requirements: --require over an evaluation's report
// (eval_baseline.cpp compares with a baseline).
#include "clef/eval_gates.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "eval/metric_table.hpp"
#include "eval/report_json.hpp"
#include "util/decimal_text.hpp"

namespace clef {
namespace {

using detail::SortedJson;
using namespace detail;

/// Where `text` is cut for a message: at `limit` bytes, back to a character boundary.
std::size_t cut_at(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return text.size();
  std::size_t at = limit;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}

/// `text` for a message, cut (long flags and hostile names must not fill a log line), its
/// length said when it was: "team.aaaa… (100010 bytes)".
std::string cut(std::string_view text, std::size_t limit = 120) {
  const std::size_t at = cut_at(text, limit);
  if (at == text.size()) return std::string(text);
  return std::string(text.substr(0, at)) + "… (" + std::to_string(text.size()) + " bytes)";
}

/// `text` quoted for a message, cut as cut() does: "\"team.aaaa…\" (100010 bytes)".
std::string shown(std::string_view text) {
  const std::size_t at = cut_at(text, 120);
  if (at == text.size()) return "\"" + std::string(text) + "\"";
  return "\"" + std::string(text.substr(0, at)) + "…\" (" + std::to_string(text.size()) + " bytes)";
}

Error malformed(const std::string& text, const std::string& why) {
  return make_error(ErrorKind::invalid_input, "malformed requirement " + shown(text) + ": " + why,
                    "--require");
}

std::string keys_of(const MetricScope& scope) {
  std::string out;
  for (const auto& [name, metric] : scope.metrics) out += (out.empty() ? "" : ", ") + name;
  return out;
}

/// The position probe's metrics (--permute), there only when it ran.
bool is_position_metric(const std::string& metric) {
  return metric.rfind("position_", 0) == 0;
}

/// The repeat probe's metrics (--repeat), there only when it ran.
bool is_repeat_metric(const std::string& metric) {
  return metric == "self_agreement" || metric.rfind("repeat", 0) == 0;
}

/// The metric a requirement reads in one model's report, or why it cannot be read.
Result<const Metric*> locate(const Requirement& r, const ModelMetrics& model) {
  const MetricScope* scope = model.scope(r.question);
  if (!scope) {
    return malformed(r.text, shown(r.question) + " is not a labelled question of the report");
  }
  const bool named_scope =
      r.question == "overall" || r.question == "latency_ms" || r.question == "cost";
  if (!named_scope && !r.label.empty()) {
    const auto label = scope->classes.find(r.label);
    if (label == scope->classes.end() && scope->count("n") == 0) {
      // No item has a gold answer: no class is scored, and every metric of one is undefined.
      scope = &unscored_class();
    } else if (label == scope->classes.end()) {
      return malformed(r.text, cut(r.question) + " has no class " + shown(r.label) +
                                   " in the report (no item has it as gold, and no model "
                                   "answered it)");
    } else {
      scope = &label->second;
    }
  }
  if (const Metric* metric = scope->metric(r.metric)) return metric;
  if (std::find(scope->lists.begin(), scope->lists.end(), r.metric) != scope->lists.end()) {
    return malformed(r.text, r.metric +
                                 " is a list in the report, not a number a requirement "
                                 "can read");
  }
  // The probes' metrics exist only when the probe ran on that question: say which flag.
  const bool position = is_position_metric(r.metric);
  const bool repeat = is_repeat_metric(r.metric);
  const std::string hint =
      position ? " (--permute N measures " + cut(r.metric) + ", on choice and score questions)"
      : repeat ? " (--repeat K measures " + cut(r.metric) + ")"
               : std::string();
  const std::string there = keys_of(*scope);
  return malformed(r.text, "there is no " + shown(r.metric) + " there" + hint + "; there is " +
                               (there.empty() ? std::string("nothing") : there));
}

/// What a requirement reads of `metric`: its value, or a bound of its interval.
Result<std::optional<double>> read(const Requirement& r, const Metric& metric) {
  if (!metric.value) return std::optional<double>();  // undefined
  if (r.bound.empty()) return metric.value;
  if (!metric.interval) {
    return malformed(r.text, r.metric + " has no interval, so " + r.bound + "() cannot read it");
  }
  return r.bound == "lower" ? metric.low : metric.high;
}

bool space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trimmed_view(std::string_view text) {
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

/// QUESTION.METRIC or QUESTION.METRIC[LABEL] into `r`: QUESTION has no '.', '[' or ']',
/// METRIC is letters, digits and '_', LABEL has no brackets.
bool read_path(std::string_view path, Requirement& r) {
  const auto dot = path.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  const std::string_view question = path.substr(0, dot);
  if (question.find_first_of("[]") != std::string_view::npos) return false;
  std::size_t at = dot + 1;
  while (at < path.size() &&
         (std::isalnum(static_cast<unsigned char>(path[at])) != 0 || path[at] == '_')) {
    ++at;
  }
  if (at == dot + 1) return false;
  r.question = std::string(question);
  r.metric = std::string(path.substr(dot + 1, at - dot - 1));
  if (at == path.size()) return true;
  if (path[at] != '[' || path.back() != ']' || path.size() - at < 3) return false;
  const std::string_view label = path.substr(at + 1, path.size() - at - 2);
  if (label.find_first_of("[]") != std::string_view::npos) return false;
  r.label = std::string(label);
  return true;
}

}  // namespace

Result<Requirement> parse_requirement(const std::string& text) {
  const char* const syntax =
      "write it as QUESTION.METRIC >= NUMBER, e.g. 'team.accuracy >= 0.9' or "
      "'lower(team.precision[billing]) >= 0.95'";
  Requirement r;
  r.text = text;
  const std::string_view all = trimmed_view(text);
  std::size_t at = 0;
  std::string_view path;
  if (all.substr(0, 6) == "lower(" || all.substr(0, 6) == "upper(") {
    r.bound = std::string(all.substr(0, 5));
    const auto close = all.find_first_of("()", 6);
    if (close == std::string_view::npos || all[close] != ')') return malformed(text, syntax);
    path = trimmed_view(all.substr(6, close - 6));
    at = close + 1;
  } else {
    while (at < all.size() && !space(all[at]) &&
           std::string_view("<>=!()").find(all[at]) == std::string_view::npos) {
      ++at;
    }
    path = all.substr(0, at);
  }
  if (path.empty()) return malformed(text, syntax);
  while (at < all.size() && space(all[at])) ++at;
  for (const char* op : {">=", "<=", "==", "!=", ">", "<"}) {
    if (all.substr(at, std::string_view(op).size()) == op) {
      r.op = op;
      break;
    }
  }
  if (r.op.empty()) return malformed(text, syntax);
  const std::string_view limit = trimmed_view(all.substr(at + r.op.size()));
  const auto value = detail::parse_decimal(limit);
  if (!value) {
    return malformed(text,
                     shown(limit) + " is not a finite decimal number (such as 0.9, .5 or 1e-3)");
  }
  r.limit = *value;
  if (!read_path(path, r)) {
    return malformed(text, shown(path) + " is not QUESTION.METRIC or QUESTION.METRIC[LABEL]");
  }
  return r;
}

Result<std::vector<std::string>> failed_requirements(const std::vector<Requirement>& requirements,
                                                     const EvalReport& typed) {
  std::vector<std::string> failures;
  if (typed.models.empty() && !requirements.empty()) {
    return make_error(ErrorKind::invalid_input,
                      "the report has no model to hold " + shown(requirements.front().text) + " to",
                      "--require");
  }
  for (const ModelMetrics& model : metric_table(to_json(typed))) {
    for (const auto& r : requirements) {
      auto found = locate(r, model);
      if (!found) return found.error();
      auto x = read(r, *found.value());
      if (!x) return x.error();
      const std::string who = model.model + ": " + cut(r.text);
      if (!x.value()) {
        const std::string path =
            cut(r.question + "." + r.metric + (r.label.empty() ? "" : "[" + r.label + "]"));
        failures.push_back(who + " (" + path + " is undefined: " +
                           cut(undefined_reason(model, r.question, r.metric, r.label), 300) + ")");
        continue;
      }
      if (!holds(*x.value(), r.op, r.limit)) {
        failures.push_back(who + " (it is " + number(*x.value()) + ")");
      }
    }
  }
  return failures;
}

Status check_requirements(const std::vector<Requirement>& requirements, const LabelledSet& set,
                          const EvalOptions& options, const ProbesRun& probes) {
  // A class exists once an item has it as gold or a model answers it: one named in a
  // requirement is looked for after the run. So is a probe's metric, when the probe runs.
  std::vector<Requirement> readable;
  for (const Requirement& r : requirements) {
    const bool position = is_position_metric(r.metric), repeat = is_repeat_metric(r.metric);
    if ((position && !probes.permuted) || (repeat && !probes.repeated)) {
      return malformed(r.text, shown(r.metric) + " is measured only by " +
                                   (position ? "--permute N" : "--repeat K") +
                                   ", which this run does not have");
    }
    if (r.label.empty() && !position && !repeat) readable.push_back(r);
  }
  if (readable.empty()) return {};
  // A report of no answers has every question, class and metric a run's report has (their
  // values undefined): what it lacks, no run can give.
  ModelResults none;
  none.model = "(no answers)";
  none.items.resize(set.items.size());
  auto failures = failed_requirements(readable, evaluate_models(set, {none}, options));
  if (!failures) return failures.error();
  return {};
}

Result<std::map<std::string, double>> parse_tolerances(const std::vector<std::string>& flags) {
  std::map<std::string, double> out;
  for (const auto& flag : flags) {
    const auto equals = flag.find('=');
    const std::string metric = equals == std::string::npos ? "*" : flag.substr(0, equals);
    const std::string delta = equals == std::string::npos ? flag : flag.substr(equals + 1);
    const auto value = detail::parse_decimal(delta);
    if (!value || *value < 0) {
      return make_error(ErrorKind::invalid_input,
                        shown(flag) +
                            ": a tolerance is METRIC=DELTA with DELTA a finite number "
                            ">= 0",
                        "--tolerance");
    }
    bool known = metric == "*";
    for (const auto& m : compared_metrics) known = known || metric == m.name;
    if (!known) {
      return make_error(ErrorKind::invalid_input,
                        shown(metric) +
                            " is not a compared metric (accuracy, accuracy_answered, coverage, "
                            "macro_f1, auroc, within_1, brier, log_loss, ece, mae, rps, "
                            "mean_iou, iou_at_least_half)",
                        "--tolerance");
    }
    out[metric] = *value;
  }
  return out;
}

}  // namespace clef
