// clef batch's input readers (JSONL, CSV/TSV, text lines) and its crash-safe output file.
#pragma once

#include <cstdio>
#include <istream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "clef/result.hpp"
#include "clef/state.hpp"

namespace clef::cli {

enum class InputFormat { jsonl, csv, tsv, text };

/// jsonl for .jsonl/.ndjson/.json and stdin, csv for .csv, tsv for .tsv, text otherwise.
InputFormat guess_input_format(const std::string& path);
Result<InputFormat> parse_input_format(const std::string& name);

/// One input item: its id (a JSON value, so numbers stay numbers) and its state, or why the
/// line could not be read (it still gets an output line).
struct InputItem {
  nlohmann::ordered_json id;
  Result<State> state = State::text("");
  std::size_t line = 0;  ///< 1-based line where the item starts.
};

class InputReader {
 public:
  virtual ~InputReader() = default;
  /// The next item, or nullopt at the end. Blank lines are skipped.
  virtual std::optional<InputItem> next() = 0;
};

struct InputFields {
  std::string id = "id";
  std::string state = "state";
};

/// Reads `in` (which must outlive the reader). CSV/TSV fail here if the header lacks a field.
Result<std::unique_ptr<InputReader>> make_reader(std::istream& in, InputFormat format,
                                                 const InputFields& fields);

/// Writes one complete line per write(2) to an O_APPEND file, so a killed run never leaves a
/// half line; "-" writes to `stdout_stream`, flushed after every line.
class OutputFile {
 public:
  /// Opens `path`. With `resume`, keeps the lines that hold a result (no "error"), drops failed
  /// and torn ones (rewriting the file atomically), and returns the kept ids through `done`.
  /// Without it, refuses an existing non-empty file unless `overwrite`.
  static Result<OutputFile> open(const std::string& path, bool resume, bool overwrite,
                                 std::set<std::string>& done, std::ostream& stdout_stream);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();

  /// Writes `line` and a newline in one call; false if the write failed.
  bool write_line(const std::string& line);

 private:
  explicit OutputFile(int fd) : m_fd(fd) {}
  explicit OutputFile(std::ostream& stream) : m_stream(&stream) {}
  int m_fd = -1;
  std::ostream* m_stream = nullptr;
};

/// The key an id is compared by when resuming (its compact JSON).
std::string id_key(const nlohmann::ordered_json& id);

/// Counts the lines of a regular file (for the progress bar's total); nullopt for pipes.
std::optional<std::size_t> count_lines(const std::string& path);

}  // namespace clef::cli
