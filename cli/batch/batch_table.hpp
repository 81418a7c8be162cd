// clef batch --output-format csv|tsv: one row per item for a spreadsheet, the input's own
// columns first, then per question its winner, probability and confidence.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "clef/decision.hpp"
#include "clef/question.hpp"

namespace clef::cli {

enum class OutputFormat { jsonl, csv, tsv };
/// "jsonl", "csv" or "tsv".
std::optional<OutputFormat> output_format_named(const std::string& name);

class ResultTable {
 public:
  /// `input_columns`: the input's header (CSV/TSV), or {"id"} for JSONL and text input.
  ResultTable(OutputFormat format, std::vector<std::string> input_columns,
              const std::vector<Question>& questions);

  /// input columns…, then per question Q: Q, Q_probability, Q_confidence; then status, error.
  std::string header() const;
  /// The row of one item: its input fields (as many as the header has, missing ones empty),
  /// then its answers or, for a failed item, empty answers and the error.
  std::string row(const std::vector<std::string>& input_fields,
                  const Result<Decision>& result) const;

 private:
  std::string joined(const std::vector<std::string>& cells) const;
  char m_separator;
  std::vector<std::string> m_input_columns;
  std::vector<std::string> m_questions;
};

}  // namespace clef::cli
