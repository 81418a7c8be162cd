// The implementation of report_json.hpp: an evaluation report's JSON read with its shape checked.
#include "eval/report_json.hpp"

#include <cstdio>

namespace clef::detail {

bool applies(const Compared& metric, const std::string& type) {
  return metric.type[0] == '\0' || type == metric.type;
}

/// `object[key]`, or null when `object` is not an object or has no such key: reports are read
/// from files, so nothing here may assume their shape.
const SortedJson* member(const SortedJson& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string text_of(const SortedJson& object, const std::string& key) {
  const SortedJson* value = member(object, key);
  return value && value->is_string() ? value->get<std::string>() : std::string();
}

std::size_t count_of(const SortedJson& object, const std::string& key) {
  const SortedJson* value = member(object, key);
  return value && value->is_number_unsigned() ? value->get<std::size_t>() : 0;
}

/// A metric's value: the number, or an interval's "value"; none when it is null (undefined).
std::optional<double> number_of(const SortedJson* value) {
  if (!value) return std::nullopt;
  if (const SortedJson* inner = value->is_object() ? member(*value, "value") : nullptr)
    value = inner;
  if (!value->is_number()) return std::nullopt;
  return value->get<double>();
}

nlohmann::json interval_json(const std::optional<metrics::Interval>& value) {
  if (!value) return nlohmann::json();
  return {{"value", value->value}, {"low", value->low}, {"high", value->high}};
}

nlohmann::json number_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

nlohmann::json id_json(const std::string& id) {
  nlohmann::json parsed = nlohmann::json::parse(id, nullptr, false);
  return parsed.is_discarded() ? nlohmann::json(id) : parsed;
}

bool holds(double value, const std::string& op, double limit) {
  if (op == ">=") return value >= limit;
  if (op == ">") return value > limit;
  if (op == "<=") return value <= limit;
  if (op == "<") return value < limit;
  if (op == "==") return value == limit;
  return value != limit;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

/// Why `metric` of `question` (of one model's report) is null: which denominator is zero.
std::string undefined_reason(const SortedJson& model, const std::string& question,
                             const std::string& metric, const std::string& label) {
  if (question == "latency_ms") return "no request was answered";
  if (question == "cost") {
    const SortedJson* cost = member(model, "cost");
    if (!cost || count_of(*cost, "known") == 0)
      return "no decision's cost is known (give --price MODEL=INPUT for a model clef has no "
             "price for)";
    return metric == "per_correct" ? "some decision's cost is unknown, or no item is all right"
                                   : "it is not defined for these items";
  }
  if (question == "overall") {
    return metric == "all_correct" ? "no item has a gold answer"
                                   : "no question has an item with a gold answer";
  }
  const SortedJson* questions = member(model, "questions");
  const SortedJson* q = questions ? member(*questions, question) : nullptr;
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

}  // namespace clef::detail
