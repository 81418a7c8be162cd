// The implementation of batch_table.hpp: clef batch --output-format csv|tsv.
#include "batch/batch_table.hpp"

#include <cctype>
#include <cstdio>

namespace clef::cli {
namespace {

/// RFC 4180 quoting (the batch reader reads it back, for TSV too).
std::string cell(const std::string& text, char separator) {
  if (text.find_first_of(std::string("\"\r\n") + separator) == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

/// "-5", "+1.5e3": a cell a spreadsheet reads as a number, and never as a formula.
bool plain_number(const std::string& text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  const std::size_t digits = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == digits) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    const std::size_t exponent = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == exponent) return false;
  }
  return i == text.size();
}

/// No cell can start a spreadsheet formula (=, +, -, @, a tab or a carriage return), whether
/// it came from a server, the input (a JSONL id "=1+2") or a question file: it gets a leading
/// '. Plain numbers ("-5") stay numbers.
std::string inert(std::string text) {
  if (!text.empty() && std::string("=+-@\t\r").find(text[0]) != std::string::npos &&
      !plain_number(text)) {
    text.insert(0, "'");
  }
  return text;
}

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
    line += cell(inert(cells[i]), m_separator);
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
  return joined(cells);
}

}  // namespace clef::cli
