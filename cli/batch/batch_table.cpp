// The implementation of batch_table.hpp: clef batch --output-format csv|tsv.
#include "batch/batch_table.hpp"

#include <cstdio>

#include "common/terminal_text.hpp"
#include "output/table_cells.hpp"

namespace clef::cli {
namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4f", value);
  return buffer;
}

}  // namespace

std::optional<OutputFormat> output_format_named(const std::string& name) {
  if (name == "jsonl") return OutputFormat::jsonl;
  if (name == "csv") return OutputFormat::csv;
  if (name == "tsv") return OutputFormat::tsv;
  return std::nullopt;
}

ResultTable::ResultTable(OutputFormat format, std::vector<std::string> input_columns,
                         const std::vector<Question>& questions)
    : m_separator(format == OutputFormat::tsv ? '\t' : ','),
      m_input_columns(std::move(input_columns)) {
  for (const auto& question : questions) m_questions.push_back(question.name);
}

std::string ResultTable::joined(const std::vector<std::string>& cells) const {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line += m_separator;
    line += table_cell(inert(cells[i]), m_separator);
  }
  return line;
}

std::string ResultTable::header() const {
  std::vector<std::string> cells = m_input_columns;
  for (const auto& name : m_questions) {
    cells.push_back(name);
    cells.push_back(name + "_probability");
    cells.push_back(name + "_confidence");
  }
  cells.push_back("status");
  cells.push_back("error");
  return joined(cells);
}

std::string ResultTable::row(const std::vector<std::string>& input_fields,
                             const Result<Decision>& result) const {
  std::vector<std::string> cells = input_fields;
  cells.resize(m_input_columns.size());
  std::string problems;
  std::string held;  ///< Questions whose answer a --policy held back (abstained): kept, and said.
  for (const auto& name : m_questions) {
    const Answer* answer = result ? result->answer(name) : nullptr;
    const bool abstained = answer && answer->status == AnswerStatus::abstained;
    if (answer && (answer->ok() || abstained)) {
      // As in JSONL, an abstained answer keeps its winner: a person reviews it.
      cells.push_back(answer->winner());
      cells.push_back(number(answer->winner_probability()));
      cells.push_back(number(answer->confidence()));
      if (abstained) held += (held.empty() ? "" : "; ") + name + ": abstained";
      continue;
    }
    cells.insert(cells.end(), 3, std::string());
    if (answer) {
      problems += (problems.empty() ? "" : "; ") + name + ": " + to_string(answer->status);
      if (!answer->problem.empty()) problems += " (" + answer->problem + ")";
    }
  }
  if (!result) {
    cells.push_back("error");
    cells.push_back(result.error().to_string());
  } else {
    cells.push_back(!problems.empty() ? "partial" : !held.empty() ? "abstained" : "ok");
    cells.push_back(problems + (problems.empty() || held.empty() ? "" : "; ") + held);
  }
  // What came from the server (a label it named, its error's text) may hold an ESC or a
  // right-to-left override, and a CSV is read on a terminal too: shown as '?' as there. The
  // input's own cells stay as they are (--resume reads the ids back).
  for (std::size_t i = m_input_columns.size(); i < cells.size(); ++i)
    cells[i] = terminal_safe(cells[i]);
  return joined(cells);
}

}  // namespace clef::cli
