// Where an output goes when the user names a path: a regular file (replaced whole, through a
// symbolic link to the file it names), stdout, or something written in place (a FIFO, a
// device); and writers that never wait past SIGINT/SIGTERM.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "clef/result.hpp"
#include "common/input_file.hpp"

namespace clef::cli {

/// What an output path names once symbolic links are followed.
struct OutputPath {
  /// The file a chain of links leads to (the one to replace or create, even when the last link
  /// dangles), else the path as given.
  std::string path;
  PathKind kind = PathKind::missing;
  std::uint64_t size = 0;
};
OutputPath output_path(const std::string& path);

/// The descriptor a path names that the shell already opened — /dev/stdin, /dev/stdout,
/// /dev/stderr, /dev/fd/N, /proc/self/fd/N — so it is written through that descriptor (its
/// offset and O_APPEND kept), never reopened or replaced; nullopt for any other path.
std::optional<int> descriptor_named(const std::string& path);

/// An fd for writing to `path` (a FIFO, a device) in place: write only, non-blocking, without
/// truncating; a FIFO waits for a reader, a tenth of a second at a time, until `stop` is set
/// (ErrorKind::cancelled). The caller closes it.
Result<int> open_in_place(const std::string& path, const std::atomic<bool>* stop);

/// Lines out, one whole line at a time.
class LineWriter {
 public:
  virtual ~LineWriter() = default;
  /// Writes `line` and a newline. Errors say what and where; a system failure is
  /// ErrorKind::connection_failed, a stop while waiting ErrorKind::cancelled.
  virtual Status write_line(std::string_view line) = 0;
  /// Everything written has left clef's buffers.
  virtual Status flush() = 0;
};

/// Lines to a stream (stdout), which must be good once flushed.
class StreamWriter final : public LineWriter {
 public:
  explicit StreamWriter(std::ostream& out) : m_out(out) {}
  Status write_line(std::string_view line) override;
  Status flush() override;

 private:
  std::ostream& m_out;
};

/// Lines to a file descriptor, in blocks: a wait for a reader or for room (a FIFO, a pipe)
/// polls a tenth of a second at a time and ends with ErrorKind::cancelled once `stop` is set.
class FdWriter final : public LineWriter {
 public:
  /// Writes to `fd`, which the caller keeps and closes.
  FdWriter(int fd, const std::atomic<bool>* stop) : m_fd(fd), m_stop(stop) {}
  /// Opens `path` (a FIFO, a device: open_in_place; a descriptor_named path: a copy of that
  /// descriptor) to write in place. The writer closes what it opened.
  static Result<FdWriter> open(const std::string& path, const std::atomic<bool>* stop);
  FdWriter(FdWriter&& other) noexcept;
  FdWriter& operator=(FdWriter&&) = delete;
  ~FdWriter() override;

  Status write_line(std::string_view line) override;
  Status flush() override;

 private:
  Status write_out(std::string_view bytes);
  int m_fd = -1;
  const std::atomic<bool>* m_stop = nullptr;
  bool m_owned = false;
  std::string m_path;  ///< For errors.
  std::string m_pending;
};

}  // namespace clef::cli
