#include "eval_gates.hpp"

#include <cmath>
#include <cstdio>
#include <optional>
#include <regex>

namespace clef::cli {
namespace {

using Json = nlohmann::json;

Error malformed(const std::string& text, const std::string& why) {
  return make_error(ErrorKind::invalid_input, "malformed requirement \"" + text + "\": " + why,
                    "--require");
}

/// Metrics that may only get worse by going down, and those that get worse by going up.
const std::vector<std::string>& higher_is_better() {
  static const std::vector<std::string> names = {
      "accuracy", "accuracy_answered", "coverage", "macro_f1", "auroc", "within_1"};
  return names;
}
const std::vector<std::string>& lower_is_better() {
  static const std::vector<std::string> names = {"brier", "log_loss", "ece", "mae", "rps"};
  return names;
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

std::optional<double> number_of(const Json* value) {
  if (!value) return std::nullopt;
  if (const Json* inner = value->is_object() ? member(*value, "value") : nullptr) value = inner;
  if (!value->is_number()) return std::nullopt;
  return value->get<double>();
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  for (const auto& n : names)
    if (n == name) return true;
  return false;
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
    if (item.key() == "classes" || item.key() == "confusion") continue;
    out += (out.empty() ? "" : ", ") + item.key();
  }
  return out;
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
      r.metric == "confusion") {
    return malformed(r.text, "there is no \"" + r.metric + "\" there; there is " +
                                 (scope ? keys_of(*scope) : std::string("nothing")));
  }
  return value;
}

}  // namespace

Result<Requirement> parse_requirement(const std::string& text) {
  static const std::regex pattern(
      R"(^\s*(?:(lower|upper)\(\s*([^()]+?)\s*\)|([^\s<>=!()]+))\s*(>=|<=|==|!=|>|<)\s*)"
      R"(([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*$)");
  std::smatch match;
  if (text.size() > 1000 || !std::regex_match(text, match, pattern)) {
    return malformed(text,
                     "write it as QUESTION.METRIC >= NUMBER, e.g. 'team.accuracy >= 0.9' "
                     "or 'lower(team.precision[billing]) >= 0.95'");
  }
  Requirement r;
  r.text = text;
  r.bound = match[1];
  std::string path = match[1].matched ? match[2].str() : match[3].str();
  r.op = match[4];
  r.limit = std::strtod(match[5].str().c_str(), nullptr);
  static const std::regex path_pattern(R"(^([^.\[\]]+)\.([A-Za-z0-9_]+)(?:\[([^\[\]]+)\])?$)");
  std::smatch parts;
  if (!std::regex_match(path, parts, path_pattern)) {
    return malformed(text, "\"" + path + "\" is not QUESTION.METRIC or QUESTION.METRIC[LABEL]");
  }
  r.question = parts[1];
  r.metric = parts[2];
  r.label = parts[3];
  return r;
}

Result<std::vector<std::string>> failed_requirements(const std::vector<Requirement>& requirements,
                                                     const Json& report) {
  std::vector<std::string> failures;
  const Json* models = member(report, "models");
  if (!models) return failures;
  for (const auto& [model_name, model] : models->items()) {
    for (const auto& r : requirements) {
      auto found = locate(r, model);
      if (!found) return found.error();
      const Json& value = *found.value();
      const std::string who = model_name + ": " + r.text;
      if (value.is_null()) {
        failures.push_back(who + " (it is not defined for these items)");
        continue;
      }
      std::optional<double> x;
      if (value.is_object()) {
        x = number_of(
            member(value, r.bound.empty() ? "value" : (r.bound == "lower" ? "low" : "high")));
      } else if (!r.bound.empty()) {
        return malformed(r.text,
                         r.metric + " has no interval, so " + r.bound + "() cannot read it");
      } else {
        x = number_of(&value);
      }
      if (!x) return malformed(r.text, r.metric + " is not a number in the report");
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
    char* end = nullptr;
    const double value = std::strtod(delta.c_str(), &end);
    if (delta.empty() || *end != '\0' || !(value >= 0) || !std::isfinite(value)) {
      return make_error(ErrorKind::invalid_input,
                        "\"" + flag + "\": a tolerance is METRIC=DELTA with DELTA >= 0",
                        "--tolerance");
    }
    if (metric != "*" && !contains(higher_is_better(), metric) &&
        !contains(lower_is_better(), metric)) {
      return make_error(ErrorKind::invalid_input,
                        "\"" + metric +
                            "\" is not a compared metric (accuracy, accuracy_answered, coverage, "
                            "macro_f1, auroc, within_1, brier, log_loss, ece, mae, rps)",
                        "--tolerance");
    }
    out[metric] = value;
  }
  return out;
}

Result<std::vector<std::string>> baseline_drops(const Json& report, const Json& baseline,
                                                const std::map<std::string, double>& tolerances) {
  auto refuse = [](const std::string& why) {
    return make_error(ErrorKind::invalid_input, why, "--baseline");
  };
  if (text_of(baseline, "schema") != text_of(report, "schema")) {
    return refuse("not a clef-eval/1 report (its \"schema\" differs)");
  }
  for (const char* hash : {"dataset_sha256", "questions_sha256"}) {
    if (text_of(baseline, hash) != text_of(report, hash)) {
      return refuse(std::string("the baseline was measured on ") +
                    (hash[0] == 'd' ? "other data" : "other questions") + " (its " + hash +
                    " differs): compare like with like");
    }
  }
  auto tolerance = [&](const std::string& metric) {
    auto it = tolerances.find(metric);
    if (it == tolerances.end()) it = tolerances.find("*");
    return it == tolerances.end() ? 0.0 : it->second;
  };
  std::vector<std::string> drops;
  bool any_model = false;
  const Json* old_models = member(baseline, "models");
  const Json* models = member(report, "models");
  if (!old_models || !models) return refuse("the baseline has no \"models\"");
  for (const auto& [model_name, model] : models->items()) {
    const Json* old_model = member(*old_models, model_name);
    if (!old_model) continue;
    any_model = true;
    const Json* old_questions = member(*old_model, "questions");
    const Json* questions = member(model, "questions");
    if (!old_questions || !questions) continue;
    for (const auto& [question, now] : questions->items()) {
      const Json* then = member(*old_questions, question);
      if (!then) continue;
      for (const auto* names : {&higher_is_better(), &lower_is_better()}) {
        for (const auto& metric : *names) {
          const auto a = number_of(member(*then, metric));
          const auto b = number_of(member(now, metric));
          if (!a || !b) continue;
          const double worse = names == &higher_is_better() ? *a - *b : *b - *a;
          if (worse > tolerance(metric) + 1e-12) {
            drops.push_back(model_name + ": " + question + "." + metric + " went from " +
                            number(*a) + " to " + number(*b) + " (tolerance " +
                            number(tolerance(metric)) + ")");
          }
        }
      }
    }
  }
  if (!any_model) return refuse("the baseline has none of these models");
  return drops;
}

}  // namespace clef::cli
