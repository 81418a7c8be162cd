// clef batch's input readers: JSONL, CSV/TSV (RFC 4180) and text lines.
#pragma once

#include <cstddef>
#include <istream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clef/result.hpp"
#include "clef/state.hpp"
#include "common/context.hpp"

namespace clef::cli {

enum class InputFormat { jsonl, csv, tsv, text };

/// The longest input line (or CSV record) kept, in bytes; a longer one is an error line for its
/// item, so a file without line breaks cannot fill memory.
inline constexpr std::size_t max_input_line = 32u * 1024u * 1024u;
/// The error of an input line longer than max_input_line, naming the line.
Error line_too_long(std::size_t line);

/// The format by the name: jsonl for .jsonl/.ndjson/.json and stdin, csv for .csv, tsv for
/// .tsv, text for .txt/.text (any case). Any other name by content: a regular file whose first
/// non-blank line is a JSON object is jsonl, else text; a pipe, FIFO or device (which cannot be
/// looked at without taking its lines) jsonl, as stdin. `recognised_by` (may be null) is then
/// told why, for a note: never silently.
InputFormat guess_input_format(const std::string& path, std::string* recognised_by = nullptr);
Result<InputFormat> parse_input_format(const std::string& name);
/// "jsonl", "csv", "tsv" or "text".
const char* to_string(InputFormat format) noexcept;
/// Says on stderr how an input whose name did not tell its format is read, and why.
void note_input_format(const Context& context, const std::string& path, InputFormat format,
                       const std::string& why);

/// One input item: its id (a JSON value, so numbers stay numbers) and its state, or why the
/// line could not be read (it still gets an output line). An id that could not be read is
/// null, never a made-up value that could equal a real id; `line` then says where it was.
struct InputItem {
  nlohmann::ordered_json id;
  Result<State> state = State::text("");
  std::size_t line = 0;  ///< 1-based line where the item starts.
  /// CSV/TSV: the row's fields as read, for an output that repeats them.
  std::vector<std::string> columns;
  /// InputFields::extra's values in their order: a string as is, a number or boolean as JSON
  /// writes it, "" when absent or null.
  std::vector<std::string> extra;
  /// InputFields::image's value: an image file's path, or a JSON array of paths; "" for none.
  std::string image;
};

class InputReader {
 public:
  virtual ~InputReader() = default;
  /// The next item, or nullopt at the end. JSONL and text lines give one item each, blank
  /// or not; a CSV/TSV blank line is not a record.
  virtual std::optional<InputItem> next() = 0;
  /// CSV/TSV: the header row's column names; empty for JSONL and text.
  virtual std::vector<std::string> header() const { return {}; }
};

struct InputFields {
  std::string id = "id";
  std::string state = "state";
  /// CSV/TSV: build the state from these columns, as a JSON object in this order, instead of
  /// taking the `state` column as text.
  std::vector<std::string> state_columns;
  /// More fields or columns to read with each item (clef eval's gold labels, --label). A CSV/TSV
  /// header without one is an error.
  std::vector<std::string> extra;
  /// The field or column naming each item's image file(s) (--image-field); empty: none.
  std::string image;
};

/// Reads `in` (which must outlive the reader). CSV/TSV fail here if the header lacks a field.
Result<std::unique_ptr<InputReader>> make_reader(std::istream& in, InputFormat format,
                                                 const InputFields& fields);

/// Counts the lines of a regular file (for the progress bar's total); nullopt for pipes.
std::optional<std::size_t> count_lines(const std::string& path);

}  // namespace clef::cli
