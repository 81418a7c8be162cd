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

/// Lets the process open about `connections` sockets beyond its usual files: the soft limit on
/// open files (often 1024) is raised toward the hard one, never past it. Best effort: when the
/// hard limit is lower, connections past it fail with a clear error of their own.
void raise_open_file_limit(std::size_t connections);

}  // namespace clef::cli
