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
}  // namespace clef::detail
