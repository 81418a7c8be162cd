// The implementation of eval_gates.hpp: requirements and baselines over an evaluation's report.
#include "clef/eval_gates.hpp"

#include <cctype>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "decimal_text.hpp"

namespace clef {
namespace {

using Json = nlohmann::json;

/// `text` for a message: long flags and hostile file names are cut, at a character boundary.
std::string shown(std::string_view text) {
  constexpr std::size_t limit = 120;
  if (text.size() <= limit) return "\"" + std::string(text) + "\"";
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return "\"" + std::string(text.substr(0, cut)) + "…\" (" + std::to_string(text.size()) +
         " bytes)";
}

Error malformed(const std::string& text, const std::string& why) {
  return make_error(ErrorKind::invalid_input, "malformed requirement " + shown(text) + ": " + why,
                    "--require");
}

Error bad_baseline(const std::string& why) {
  return make_error(ErrorKind::invalid_input, "the baseline " + why, "--baseline");
}

/// A metric --baseline compares: which way is worse, its shape in the report, and the question
/// type that has it ("" for every type).
struct Compared {
  const char* name;
  bool higher_is_better;
  bool interval;
  const char* type;
};

constexpr Compared compared_metrics[] = {{"accuracy", true, true, ""},
                                         {"accuracy_answered", true, true, ""},
                                         {"coverage", true, true, ""},
                                         {"macro_f1", true, false, ""},
                                         {"auroc", true, false, "noul"},
                                         {"within_1", true, true, "score"},
                                         {"brier", false, true, ""},
                                         {"log_loss", false, true, ""},
                                         {"ece", false, false, ""},
                                         {"mae", false, true, "score"},
                                         {"rps", false, true, "score"},
                                         {"mean_iou", true, true, "box"},
                                         {"iou_at_least_half", true, true, "box"}};

bool applies(const Compared& metric, const std::string& type) {
  return metric.type[0] == '\0' || type == metric.type;
}

/// `object[key]`, or null when `object` is not an object or has no such key: reports are read
/// from files, so nothing here may assume their shape.
const Json* member(const Json& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string text_of(const Json& object, const std::string& key) {
  const Json* value = member(object, key);
  return value && value->is_string() ? value->get<std::string>() : std::string();
}

std::size_t count_of(const Json& object, const std::string& key) {
  const Json* value = member(object, key);
  return value && value->is_number_unsigned() ? value->get<std::size_t>() : 0;
}

/// A metric's value: the number, or an interval's "value"; none when it is null (undefined).
std::optional<double> number_of(const Json* value) {
  if (!value) return std::nullopt;
  if (const Json* inner = value->is_object() ? member(*value, "value") : nullptr) value = inner;
  if (!value->is_number()) return std::nullopt;
  return value->get<double>();
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

bool holds(double value, const std::string& op, double limit) {
  if (op == ">=") return value >= limit;
  if (op == ">") return value > limit;
  if (op == "<=") return value <= limit;
  if (op == "<") return value < limit;
  if (op == "==") return value == limit;
  return value != limit;
}

std::string keys_of(const Json& object) {
  std::string out;
  for (const auto& item : object.items()) {
    if (!item.value().is_number() && !item.value().is_object() && !item.value().is_null()) continue;
    if (item.key() == "classes" || item.key() == "confusion" || item.key() == "failures") continue;
    out += (out.empty() ? "" : ", ") + item.key();
  }
  return out;
}

/// Why `metric` of `question` (of one model's report) is null: which denominator is zero.
std::string undefined_reason(const Json& model, const std::string& question,
                             const std::string& metric, const std::string& label) {
  if (question == "latency_ms") return "no request was answered";
  if (question == "overall") {
    return metric == "all_correct" ? "no item has a gold answer"
                                   : "no question has an item with a gold answer";
  }
  const Json* questions = member(model, "questions");
  const Json* q = questions ? member(*questions, question) : nullptr;
  if (!q) return "it is not defined for these items";
  if (count_of(*q, "n") == 0) return "no item has a gold answer for " + question;
  // The per-class rates: precision over the items answered L, recall over those whose gold is L.
  const std::string of_class = label.empty() && text_of(*q, "type") == "noul" ? "yes" : label;
  if (!of_class.empty() && metric == "precision") return "no item was answered " + of_class;
  if (!of_class.empty() && metric == "recall") {
    return "no item has " + of_class + " as its gold answer";
  }
  if (!of_class.empty() && metric == "f1") {
    return "no item has " + of_class + " as its gold answer or was answered it";
  }
  if (count_of(*q, "answered") == 0) return "no item was answered";
  if (metric == "auroc") return "the answered items' gold answers are all one class";
  return "it is not defined for these items";
}

/// The value a requirement reads in one model's report, or why it cannot be read.
Result<const Json*> locate(const Requirement& r, const Json& model) {
  const Json* scope = nullptr;
  if (r.question == "overall" || r.question == "latency_ms") {
    scope = member(model, r.question);
  } else {
    const Json* questions = member(model, "questions");
    scope = questions ? member(*questions, r.question) : nullptr;
    if (!scope) {
      return malformed(r.text, "\"" + r.question + "\" is not a labelled question of the report");
    }
    if (!r.label.empty()) {
      const Json* classes = member(*scope, "classes");
      scope = classes ? member(*classes, r.label) : nullptr;
      if (!scope) {
        return malformed(r.text, r.question + " has no class \"" + r.label +
                                     "\" in the report (no item has it as gold or answer)");
      }
    }
  }
  const Json* value = scope ? member(*scope, r.metric) : nullptr;
  if (!value || value->is_array() || value->is_string() || r.metric == "classes" ||
      r.metric == "confusion" || r.metric == "failures") {
    return malformed(r.text, "there is no \"" + r.metric + "\" there; there is " +
                                 (scope ? keys_of(*scope) : std::string("nothing")));
  }
  return value;
}

bool space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trimmed(std::string_view text) {
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
  const std::string_view all = trimmed(text);
  std::size_t at = 0;
  std::string_view path;
  if (all.substr(0, 6) == "lower(" || all.substr(0, 6) == "upper(") {
    r.bound = std::string(all.substr(0, 5));
    const auto close = all.find_first_of("()", 6);
    if (close == std::string_view::npos || all[close] != ')') return malformed(text, syntax);
    path = trimmed(all.substr(6, close - 6));
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
  const std::string_view limit = trimmed(all.substr(at + r.op.size()));
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
  const Json report = to_json(typed);
  const Json* models = member(report, "models");
  if (!models) return failures;
  for (const auto& [model_name, model] : models->items()) {
    for (const auto& r : requirements) {
      auto found = locate(r, model);
      if (!found) return found.error();
      const Json& value = *found.value();
      const std::string who = model_name + ": " + r.text;
      std::optional<double> x;
      if (value.is_object()) {
        x = number_of(
            member(value, r.bound.empty() ? "value" : (r.bound == "lower" ? "low" : "high")));
      } else if (!r.bound.empty() && !value.is_null()) {
        return malformed(r.text,
                         r.metric + " has no interval, so " + r.bound + "() cannot read it");
      } else if (!value.is_null()) {
        x = number_of(&value);
        if (!x) return malformed(r.text, r.metric + " is not a number in the report");
      }
      if (!x) {
        const std::string path =
            r.question + "." + r.metric + (r.label.empty() ? "" : "[" + r.label + "]");
        failures.push_back(who + " (" + path + " is undefined: " +
                           undefined_reason(model, r.question, r.metric, r.label) + ")");
        continue;
      }
      if (!holds(*x, r.op, r.limit)) {
        failures.push_back(who + " (it is " + number(*x) + ")");
      }
    }
  }
  return failures;
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

namespace {

/// Why a baseline metric is not a metric, or "" when it is one.
std::string metric_shape_problem(const Json& value, bool interval) {
  if (value.is_null()) return {};
  if (!interval) return value.is_number() ? std::string() : "is not a number or null";
  if (!value.is_object()) return "is not an interval {value, low, high} or null";
  for (const char* bound : {"value", "low", "high"}) {
    const Json* part = member(value, bound);
    if (!part || !part->is_number()) {
      return std::string("is an interval without a number \"") + bound + "\"";
    }
  }
  return {};
}

Status check_question(const Json& question, const std::string& where) {
  if (!question.is_object()) return bad_baseline(where + " is not an object");
  const std::string type = text_of(question, "type");
  if (type != "choice" && type != "noul" && type != "score" && type != "box") {
    return bad_baseline(where + ".type is not choice, noul, score or box");
  }
  for (const auto& metric : compared_metrics) {
    if (!applies(metric, type)) continue;
    const Json* value = member(question, metric.name);
    if (!value) return bad_baseline(where + " has no \"" + metric.name + "\"");
    const std::string problem = metric_shape_problem(*value, metric.interval);
    if (!problem.empty()) return bad_baseline(where + "." + metric.name + " " + problem);
  }
  return {};
}

}  // namespace

namespace {

Status check_baseline(const Json& baseline, const std::string& dataset_sha256,
                      const std::string& questions_sha256) {
  if (!baseline.is_object() || text_of(baseline, "schema") != "clef-eval/1") {
    return bad_baseline("is not a clef-eval/1 report (its \"schema\" is not \"clef-eval/1\")");
  }
  auto same = [&](const char* hash, const std::string& expected, const char* what) -> Status {
    const Json* value = member(baseline, hash);
    if (!value || !value->is_string()) {
      return bad_baseline(std::string("has no \"") + hash + "\" string");
    }
    if (value->get<std::string>() != expected) {
      return bad_baseline(std::string("was measured on ") + what + " (its " + hash +
                          " differs): compare like with like");
    }
    return {};
  };
  if (auto status = same("dataset_sha256", dataset_sha256, "other data"); !status) return status;
  if (auto status = same("questions_sha256", questions_sha256, "other questions"); !status) {
    return status;
  }
  const Json* models = member(baseline, "models");
  if (!models || !models->is_object()) return bad_baseline("has no \"models\" object");
  if (models->empty()) return bad_baseline("has no model in \"models\"");
  for (const auto& [name, model] : models->items()) {
    const std::string where = "models." + name;
    if (!model.is_object()) return bad_baseline(where + " is not an object");
    const Json* questions = member(model, "questions");
    if (!questions || !questions->is_object()) {
      return bad_baseline(where + " has no \"questions\" object");
    }
    if (questions->empty()) {
      return bad_baseline(where + ".questions is empty (a report has every labelled question)");
    }
    for (const auto& [question, entry] : questions->items()) {
      if (auto status = check_question(entry, where + ".questions." + question); !status) {
        return status;
      }
    }
  }
  return {};
}

/// How far `metric` may get worse: its own tolerance, else the one for every metric, else 0.
double tolerance_of(const std::map<std::string, double>& tolerances, const std::string& metric) {
  auto it = tolerances.find(metric);
  if (it == tolerances.end()) it = tolerances.find("*");
  return it == tolerances.end() ? 0.0 : it->second;
}

/// The compared metrics of one question of one model, `then` in the baseline and `now` in this
/// run (both of the same type), into `out`.
void compare_question(const std::string& model_name, const Json& model, const std::string& question,
                      const Json& then, const Json& now,
                      const std::map<std::string, double>& tolerances, BaselineComparison& out) {
  const std::string type = text_of(now, "type");
  const std::string who = model_name + ": " + question;
  for (const auto& metric : compared_metrics) {
    if (!applies(metric, type)) continue;
    const auto a = number_of(member(then, metric.name));
    const auto b = number_of(member(now, metric.name));
    const std::string name = who + "." + metric.name;
    if (!a && !b) {
      out.notes.push_back(name + " is undefined in both reports: not compared");
      continue;
    }
    if (!a) {
      out.notes.push_back(name + " was undefined in the baseline (now " + number(*b) +
                          "): not compared");
      continue;
    }
    ++out.compared;
    if (!b) {
      out.drops.push_back(name + " went from " + number(*a) + " to undefined (" +
                          undefined_reason(model, question, metric.name, "") + ")");
      continue;
    }
    const double worse = metric.higher_is_better ? *a - *b : *b - *a;
    const double allowed = tolerance_of(tolerances, metric.name);
    if (worse > allowed + 1e-12) {
      out.drops.push_back(name + " went from " + number(*a) + " to " + number(*b) + " (tolerance " +
                          number(allowed) + ")");
    }
  }
}

}  // namespace

Result<EvalBaseline> EvalBaseline::from_json(const nlohmann::ordered_json& document,
                                             const std::string& dataset_sha256,
                                             const std::string& questions_sha256) {
  // Sorted objects, as the report's own JSON form is: both sides are read the same way.
  Json sorted(document);
  if (auto status = check_baseline(sorted, dataset_sha256, questions_sha256); !status) {
    return status.error();
  }
  return EvalBaseline(std::make_shared<const Json>(std::move(sorted)));
}

Result<BaselineComparison> compare_to_baseline(const EvalReport& typed, const EvalBaseline& checked,
                                               const std::map<std::string, double>& tolerances) {
  const Json report = to_json(typed);
  const Json& baseline = checked.document();
  if (auto status = check_baseline(baseline, text_of(report, "dataset_sha256"),
                                   text_of(report, "questions_sha256"));
      !status) {
    return status.error();
  }
  BaselineComparison out;
  const Json& old_models = *member(baseline, "models");
  const Json* models = member(report, "models");
  if (!models || !models->is_object()) return bad_baseline("has nothing to compare with");
  for (const auto& [model_name, model] : models->items()) {
    const Json* old_model = member(old_models, model_name);
    if (!old_model) {
      out.notes.push_back("model " + model_name + " is not in the baseline: not compared");
      continue;
    }
    const Json& old_questions = *member(*old_model, "questions");
    const Json* questions = member(model, "questions");
    if (!questions) continue;
    for (const auto& [question, now] : questions->items()) {
      const Json* then = member(old_questions, question);
      const std::string who = model_name + ": " + question;
      if (!then) {
        out.notes.push_back(who + " is not in the baseline: not compared");
        continue;
      }
      const std::string type = text_of(now, "type");
      if (text_of(*then, "type") != type) {
        return bad_baseline("has " + question + " as a " + text_of(*then, "type") +
                            " question, this run as a " + type + " (models." + model_name +
                            ".questions." + question + ".type)");
      }
      compare_question(model_name, model, question, *then, now, tolerances, out);
    }
  }
  if (out.compared == 0) {
    std::string why = "and this run have no metric defined in both";
    if (!out.notes.empty()) why += " (" + out.notes.front() + ")";
    return bad_baseline(why + ": a comparison of nothing proves nothing");
  }
  return out;
}

}  // namespace clef
