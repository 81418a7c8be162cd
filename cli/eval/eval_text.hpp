// clef eval's report for people: the terminal summary and the Markdown for a pull request.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace clef::cli {

/// Per model and question: n, coverage, accuracy with its interval, macro-F1, Brier, ECE with
/// its noise floor, a bar per label's F1; then each comparison.
void print_eval_summary(std::ostream& out, const nlohmann::json& report, bool color);

/// The same as Markdown tables.
std::string report_markdown(const nlohmann::json& report);

}  // namespace clef::cli
