// The files one command reads and writes, told apart by what they are on disk, not by how they
// were named: an output that is also an input is refused before anything is written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "clef/result.hpp"

namespace clef::cli {

/// A file a command reads or writes, named for messages: {"the input", "tickets.jsonl"}. "-" is
/// stdin as an input, stdout as an output; an empty path is no file.
struct NamedFile {
  std::string role;
  std::string path;
};

/// `path` as the file it names would be reached, existing or not: absolute, the links of its
/// existing part resolved (weakly_canonical alone leaves a relative path with no existing part as
/// written: "out.jsonl" and "./out.jsonl" were two files); nullopt when the system cannot say.
std::optional<std::string> resolved_path(const std::string& path);

/// Refused (invalid_input, naming both): two outputs that are one file, or an output that is the
/// same file as an input, compared
/// by device and inode (through any link, hard link or /proc path), or by canonical path for one
/// that does not exist yet. Stdout counts when it is a regular file: `clef batch in.jsonl >>
/// in.jsonl` would read its own lines for ever.
Status check_no_output_is_an_input(const std::vector<NamedFile>& outputs,
                                   const std::vector<NamedFile>& inputs);

}  // namespace clef::cli
