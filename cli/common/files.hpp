// Reading a whole file the user named (questions, a state, a token, the run record).
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "clef/result.hpp"

namespace clef::cli {

/// Files a person writes by hand are small; a cap keeps a wrong path (a disk image, /dev/zero)
/// from filling memory.
inline constexpr std::size_t max_input_file_bytes = 64u * 1024u * 1024u;

/// The whole of `path` ("-" reads `in`), or an invalid_input error naming `what` and the path.
Result<std::string> read_file(const std::string& path, const std::string& what, std::istream& in,
                              std::size_t max_bytes = max_input_file_bytes);

/// The SHA-256 of the file at `path` (hex), read in blocks: inputs of any size. An
/// invalid_input error naming `what` when it cannot be opened or read.
Result<std::string> file_sha256(const std::string& path, const std::string& what);

/// A connection_failed error for what was being done to `path`, with errno's text.
Error system_error(const std::string& what, const std::string& path);

/// How many connections the open-file limit lets a run keep.
struct OpenFiles {
  std::size_t connections = 0;  ///< As many as were asked for, or as many as the limit allows.
  std::size_t limit = 0;        ///< The open-file limit now (0: none).
};
/// Lets the process open about `connections` sockets beyond its usual files: the soft limit on
/// open files (often 1024) is raised toward the hard one, never past it. When the hard limit is
/// lower, says how many connections fit, so the caller keeps no more in flight than that
/// (past it a connection fails at once, as if the server were down).
OpenFiles raise_open_file_limit(std::size_t connections);

}  // namespace clef::cli
