// clef batch's output file: one writer at a time (flock), a record of what run wrote it, and
// the resume rules (which lines are kept, which ids run again).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "clef/decision.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// What a run was: what `--resume` must match before it appends to a file. Kept beside OUT as
/// OUT.clef-run.json.
struct RunRecord {
  std::vector<std::pair<std::string, std::string>> fields;  ///< name, value; compared in order.
  /// What the server said the model is ("clef-flash:latest@sha256:…"), "" when unknown: not
  /// compared, since a re-pulled model is the news --resume should tell, not a refusal. A resume
  /// under another version records both ("A, then B") and warns through on_model_change.
  std::string model_version;
  nlohmann::ordered_json to_json() const;
};

/// The sidecar file that holds OUT's RunRecord: beside the file OUT's links lead to.
std::string run_record_path(const std::string& output);

struct OutputOptions {
  bool resume = false;
  bool overwrite = false;
  bool force_resume = false;  ///< Resume even when the run record differs or is missing.
  /// With resume: told each line that is kept (clef eval keeps the earlier results typed).
  std::function<void(const nlohmann::ordered_json&)> on_kept;
  /// SIGINT/SIGTERM's flag: a FIFO's or pipe's write that waits for its reader ends once set.
  const std::atomic<bool>* stop = nullptr;
  /// With resume: told the version the file's earlier lines were answered by, when it is known
  /// and not this run's (RunRecord::model_version).
  std::function<void(const std::string& was)> on_model_change;
  /// With resume: the run's questions, each name with its type ("choice"…): a line kept
  /// answers every one of them, with that type (empty: any answers will do).
  std::vector<std::pair<std::string, std::string>> asked;
  /// The way on when OUTPUT holds another run's lines (BatchFlags::after_other_run).
  std::string after_other_run =
      "use another -o, --overwrite to start again, or --force-resume if you mean it";
};

/// True when a written line (parsed) is a result `--resume` keeps: an object with an id, no
/// error, every answer's status "ok" or "abstained" with a winner, and an answer of its type to
/// each question `asked` (OutputOptions::asked). Everything else (errors, invalid or missing
/// answers, a hand-edited line; torn or unparsable lines never get this far) is redone.
bool is_kept_result(const nlohmann::ordered_json& line,
                    const std::vector<std::pair<std::string, std::string>>& asked = {});
/// The same for a Decision about to be written: every answer ok or abstained (valid, below a
/// --policy threshold).
bool all_answered(const Decision& decision);

/// Writes complete lines, each call's in one write(2), to an O_APPEND file it holds an exclusive
/// flock on for its whole life, so a killed run never leaves a half line and a second writer is
/// refused; "-" writes to `stdout_stream`, flushed after every call.
class OutputFile {
 public:
  /// Opens and locks `path`. With resume, checks the run record, keeps the lines that hold a
  /// result (rewriting the file atomically) and returns their ids through `done`. Without it,
  /// refuses an existing non-empty file unless `overwrite`. A FIFO, pipe or device is written
  /// in place, as a stream: no run record, no --resume. Errors say what and where;
  /// `io_failed` tells a failing disk or path (ExitCode::output) from a refusal (usage).
  static Result<OutputFile> open(const std::string& path, const OutputOptions& options,
                                 const RunRecord& record, std::unordered_set<std::string>& done,
                                 std::ostream& stdout_stream, bool& io_failed);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();

  bool is_stdout() const noexcept { return m_stream != nullptr; }
  /// Written lines cannot be read back: stdout, or a FIFO, pipe or device (-o /dev/stdout).
  bool is_stream() const noexcept { return m_stream != nullptr || !m_regular; }
  /// Writes `line` (one line, or several joined by newlines) and a newline in one call; the
  /// offset of its first byte in the file (0 for stdout), or nullopt if the write failed (a
  /// short write is cut back: all of it or none).
  std::optional<std::uint64_t> write_line(const std::string& line);
  /// The line written at `offset` (without its newline), for copying a deduplicated result.
  std::optional<std::string> read_line(std::uint64_t offset) const;

 private:
  static Result<OutputFile> open_file(const std::string& path, const OutputOptions& options,
                                      const RunRecord& record,
                                      std::unordered_set<std::string>& done);
  static Result<OutputFile> open_any(const std::string& path, const OutputOptions& options,
                                     const RunRecord& record,
                                     std::unordered_set<std::string>& done);
  static Result<OutputFile> open_stream(OutputFile file, const std::string& path,
                                        const OutputOptions& options, bool own_description);
  explicit OutputFile(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  explicit OutputFile(std::ostream& stream) : m_stream(&stream) {}
  int m_fd = -1;
  std::uint64_t m_size = 0;
  std::ostream* m_stream = nullptr;
  bool m_regular = true;
  /// Not a regular file: a write waiting for the reader ends once this is set.
  const std::atomic<bool>* m_stop = nullptr;
};

/// Writes an id as its compact JSON (dump_json's bytes), the common ids without a JSON dump.
void append_id(std::string& out, const nlohmann::ordered_json& id);

/// The key an id is compared by when resuming (its compact JSON).
std::string id_key(const nlohmann::ordered_json& id);

}  // namespace clef::cli
