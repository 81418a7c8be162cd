// The implementation of metric_table.hpp: a clef-eval/1 document's metrics, typed.
#include "eval/metric_table.hpp"

namespace clef::detail {
namespace {

/// `value` as a metric, or nullopt when it is not one (a string, an array, an object that is
/// not an interval).
std::optional<Metric> metric_of(const SortedJson& value) {
  Metric metric;
  if (value.is_null()) return metric;
  if (value.is_number()) {
    metric.value = value.get<double>();
    return metric;
  }
  if (!value.is_object() || !value.contains("value")) return std::nullopt;
  metric.interval = true;
  metric.value = number_of(member(value, "value"));
  metric.low = number_of(member(value, "low"));
  metric.high = number_of(member(value, "high"));
  return metric;
}

MetricScope scope_of(const SortedJson* object) {
  MetricScope scope;
  if (!object || !object->is_object()) return scope;
  scope.type = text_of(*object, "type");
  for (const auto& [name, value] : object->items()) {
    if (name == "classes") {
      for (const auto& [label, scores] : value.items()) scope.classes[label] = scope_of(&scores);
      continue;
    }
    if (auto metric = metric_of(value))
      scope.metrics[name] = *metric;
    else if (value.is_array())
      scope.lists.push_back(name);
  }
  return scope;
}

/// A class one model has and another does not: the other never answered it and no item has it
/// as gold (gold is the same for every model), so its rates are 0/0 and its counts 0 — written
/// in so that a requirement on that class reads as undefined for that model, not as unknown.
void add_absent_classes(std::vector<ModelMetrics>& table) {
  std::map<std::string, std::vector<std::string>> labels;  // question -> every model's classes
  for (const auto& model : table) {
    for (const auto& [question, scope] : model.questions) {
      for (const auto& [label, scores] : scope.classes) labels[question].push_back(label);
    }
  }
  MetricScope absent = unscored_class();
  absent.metrics["support"].value = 0.0;
  absent.metrics["predicted"].value = 0.0;
  for (auto& model : table) {
    for (auto& [question, scope] : model.questions) {
      for (const auto& label : labels[question]) scope.classes.emplace(label, absent);
    }
  }
}

}  // namespace

const Metric* MetricScope::metric(const std::string& name) const {
  const auto it = metrics.find(name);
  return it == metrics.end() ? nullptr : &it->second;
}

std::optional<double> MetricScope::value(const std::string& name) const {
  const Metric* found = metric(name);
  return found ? found->value : std::nullopt;
}

double MetricScope::count(const std::string& name) const {
  return value(name).value_or(0.0);
}

const MetricScope* ModelMetrics::scope(const std::string& name) const {
  if (name == "overall") return &overall;
  if (name == "latency_ms") return &latency_ms;
  if (name == "cost") return &cost;
  const auto it = questions.find(name);
  return it == questions.end() ? nullptr : &it->second;
}

const MetricScope& unscored_class() {
  static const MetricScope unscored = [] {
    Metric rate;
    rate.interval = true;
    MetricScope scope;
    scope.metrics = {{"precision", rate},
                     {"recall", rate},
                     {"f1", Metric{}},
                     {"support", Metric{}},
                     {"predicted", Metric{}}};
    return scope;
  }();
  return unscored;
}

std::vector<ModelMetrics> metric_table(const SortedJson& report) {
  std::vector<ModelMetrics> table;
  const SortedJson* models = member(report, "models");
  if (!models || !models->is_object()) return table;
  for (const auto& [name, model] : models->items()) {
    ModelMetrics row;
    row.model = name;
    if (const SortedJson* questions = member(model, "questions");
        questions && questions->is_object()) {
      for (const auto& [question, entry] : questions->items())
        row.questions[question] = scope_of(&entry);
    }
    row.overall = scope_of(member(model, "overall"));
    row.latency_ms = scope_of(member(model, "latency_ms"));
    row.cost = scope_of(member(model, "cost"));
    table.push_back(std::move(row));
  }
  add_absent_classes(table);
  return table;
}

std::string undefined_reason(const ModelMetrics& model, const std::string& question,
                             const std::string& metric, const std::string& label) {
  if (question == "latency_ms") return "no request was answered";
  if (question == "cost") {
    if (model.cost.count("known") == 0)
      return "no decision's cost is known (give --price MODEL=INPUT for a model clef has no "
             "price for)";
    return metric == "per_correct" ? "some decision's cost is unknown, or no item is all right"
                                   : "it is not defined for these items";
  }
  if (question == "overall") {
    return metric == "all_correct" ? "no item has a gold answer"
                                   : "no question has an item with a gold answer";
  }
  const MetricScope* q = model.scope(question);
  if (!q) return "it is not defined for these items";
  if (q->count("n") == 0) return "no item has a gold answer for " + question;
  // The per-class rates: precision over the items answered L, recall over those whose gold is L.
  const std::string of_class = label.empty() && q->type == "noul" ? "yes" : label;
  if (!of_class.empty() && metric == "precision") return "no item was answered " + of_class;
  if (!of_class.empty() && metric == "recall") {
    return "no item has " + of_class + " as its gold answer";
  }
  if (!of_class.empty() && metric == "f1") {
    return "no item has " + of_class + " as its gold answer or was answered it";
  }
  if (q->count("answered") == 0) return "no item was answered";
  if (metric == "auroc") return "the answered items' gold answers are all one class";
  return "it is not defined for these items";
}

}  // namespace clef::detail
