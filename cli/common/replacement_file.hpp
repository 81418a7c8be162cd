// Replacing a file whole: the new content goes to a temporary file beside it that no one can
// guess or plant (mkstemp: a random name, created exclusively, never through a link), which is
// renamed over the file once it is complete, or removed.
#pragma once

#include <cstddef>
#include <string>

#include "clef/result.hpp"

namespace clef::cli {

class ReplacementFile {
 public:
  /// A new, empty temporary file in `path`'s directory, named after it and locked (flock) while
  /// this process lives. A system failure (ErrorKind::connection_failed, with the system's
  /// reason) when it cannot be made.
  static Result<ReplacementFile> create(const std::string& path);
  /// Removes the temporary files create() made for `path` whose writers died (a kill -9 in the
  /// middle of a rewrite left one beside it): those no process holds locked. Returns how many.
  /// Call it while holding the lock the writers of `path` take, so that none is starting one.
  static std::size_t remove_abandoned(const std::string& path);
  ReplacementFile(ReplacementFile&& other) noexcept;
  ReplacementFile& operator=(ReplacementFile&&) = delete;
  /// Removes the temporary file unless commit() renamed it.
  ~ReplacementFile();

  int fd() const noexcept { return m_fd; }
  const std::string& temporary_path() const noexcept { return m_temporary; }
  /// Flushes it to disk, gives it the mode `path` has (a new file: 0666 less the umask) and
  /// renames it over `path`. The fd stays open (and locked, if the caller locked it): the
  /// caller may go on writing to what is now `path`.
  Status commit();
  /// Hands the fd over to the caller, who closes it.
  int release() noexcept;

 private:
  ReplacementFile(std::string path, std::string temporary, int fd)
      : m_path(std::move(path)), m_temporary(std::move(temporary)), m_fd(fd) {}
  std::string m_path;
  std::string m_temporary;
  int m_fd = -1;
  bool m_committed = false;
  bool m_released = false;
};

/// Writes `text` as the whole of `path` through a ReplacementFile.
Status replace_file(const std::string& path, const std::string& text);

/// Writes all of `data` to `fd`, again after EINTR; false (errno set) when the system refuses.
bool write_all(int fd, const std::string& data);

}  // namespace clef::cli
