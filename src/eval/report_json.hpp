// Internal: reading an evaluation report's JSON, which may come from a file (a baseline): every
// accessor checks the shape it reads, nothing assumes it. Shared by the requirements
// (eval_gates.cpp) and the baseline comparison (eval_baseline.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "clef/metrics.hpp"

namespace clef::detail {

/// The reports' JSON: nlohmann::json keeps an object's keys sorted, as the reports list them.
using SortedJson = nlohmann::json;

/// A metric --baseline compares: which way is worse, its shape in the report, and the question
/// type that has it ("" for every type).
struct Compared {
  const char* name;
  bool higher_is_better;
  bool interval;
  const char* type;
};

/// The metrics --baseline compares, and those a --tolerance may name.
inline constexpr Compared compared_metrics[] = {{"accuracy", true, true, ""},
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

bool applies(const Compared& metric, const std::string& type);

/// `object[key]`, or null when `object` is not an object or has no such key.
const nlohmann::json* member(const nlohmann::json& object, const std::string& key);
/// A string member, or "" when there is none.
std::string text_of(const nlohmann::json& object, const std::string& key);
/// An unsigned member, or 0 when there is none.
std::size_t count_of(const nlohmann::json& object, const std::string& key);
/// A metric's value: the number, or an interval's "value"; none when it is null (undefined).
std::optional<double> number_of(const nlohmann::json* value);
/// Whether `value` OP `limit` holds, OP one of >= > <= < == != (a requirement's).
bool holds(double value, const std::string& op, double limit);
/// A number as messages print it (four significant digits).
std::string number(double value);

/// Writing: an interval as {"value", "low", "high"}, a number, or null when undefined (a zero
/// denominator): no number a gate could mistake for one.
nlohmann::json interval_json(const std::optional<metrics::Interval>& value);
nlohmann::json number_json(const std::optional<double>& value);
/// An item's id as its JSON value (items are keyed by their id's compact JSON text); the text
/// itself when it is not JSON.
nlohmann::json id_json(const std::string& id);

}  // namespace clef::detail
