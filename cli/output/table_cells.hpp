// Cells of the CSV and TSV clef writes (clef batch --output-format csv|tsv, clef ask --format
// tsv): text from a server, an input or a question file made one cell that stays one cell and
// never starts a spreadsheet formula.
#pragma once

#include <string>

namespace clef::cli {

/// `text` as one cell between `separator`s: RFC 4180 quoting when it holds a quote, a line break
/// or the separator (clef batch's reader reads it back, for TSV too).
std::string table_cell(const std::string& text, char separator);

/// `text` with a leading ' when it would start a spreadsheet formula (=, +, -, @, a tab or a
/// carriage return), whether it came from a server, the input (a JSONL id "=1+2") or a question
/// file. Plain numbers ("-5") stay numbers.
std::string inert(std::string text);

}  // namespace clef::cli
