// A file the user named for reading line by line (batch input, eval data, results, shards): the
// system's reason when it cannot be opened, a directory refused before anything is read, and
// every wait on a pipe, FIFO, terminal or device cut short by SIGINT/SIGTERM.
#pragma once

#include <atomic>
#include <istream>
#include <memory>
#include <optional>
#include <string>

#include "clef/json.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// What a path names, by stat(2) (a symbolic link is followed).
enum class PathKind {
  missing,    ///< Nothing there, or it cannot be looked at (errno says why).
  regular,    ///< A file: it can be read twice (hashed, counted, then read) and replaced.
  directory,  ///< Never read as a file.
  stream,     ///< A FIFO, a pipe, a terminal, a device, a socket: read once, never replaced.
};
PathKind path_kind(const std::string& path);

/// "No such file or directory", "Permission denied", "Is a directory": strerror(errno), for
/// messages that say why.
std::string system_reason(int error_number);

class InputFile {
 public:
  /// Opens `path` for reading ("-": `standard_input`). `what` names it in errors ("the input").
  /// Refused with the system's reason: a path that cannot be opened, a directory. A FIFO with
  /// no writer yet opens at once; reads wait for it. Once `stop` (may be null) is set, the next
  /// read fails the stream (badbit: clef::read_line gives no line, not even the part of one read
  /// before), and failure() says the reading was interrupted.
  static Result<InputFile> open(const std::string& path, const std::string& what,
                                std::istream& standard_input, const std::atomic<bool>* stop);
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  ~InputFile();

  std::istream& stream() noexcept { return *m_stream; }
  /// clef::read_line on `in`: the same lines, flags and limits, read faster from a stream this
  /// class opened (its block scanned for the line's end, not read a byte at a time).
  static bool read_line(std::istream& in, Line& line, std::size_t max_bytes);
  /// From any thread: a read that waits (a pipe, a FIFO, a terminal) ends the stream within a
  /// tenth of a second, as the stop flag would, and failure() says the reading was interrupted.
  /// The caller's own stream ("-" in the tests) is not waited on and cannot be interrupted.
  void interrupt() noexcept;
  /// A regular file: it can be read again without taking what it holds from anyone.
  bool is_regular() const noexcept { return m_regular; }
  /// Why the stream ended before the input did — the reading was interrupted, the system
  /// failed it (EIO), a line never ended — naming the path; nullopt at a clean end.
  std::optional<Error> failure() const;
  /// The SHA-256 (hex) of every byte read so far — of the whole input once it was read to its
  /// end — so a stream is checked as it is read, once. nullopt for the caller's own stream.
  std::optional<std::string> sha256_of_what_was_read() const;

 private:
  class Buffer;
  InputFile() = default;
  std::string m_path;
  std::string m_what;
  std::unique_ptr<Buffer> m_buffer;  ///< Null when reading the caller's own stream ("-").
  std::unique_ptr<std::istream> m_own_stream;
  std::istream* m_stream = nullptr;
  bool m_regular = false;
};

}  // namespace clef::cli
