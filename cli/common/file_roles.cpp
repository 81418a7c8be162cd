// The implementation of file_roles.hpp: an output that is also an input, refused.
#include "common/file_roles.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <utility>

namespace clef::cli {
namespace {

/// What a named file is: its device and inode when it exists, else the path it would have.
struct Identity {
  std::optional<std::pair<dev_t, ino_t>> inode;
  std::string canonical;
};

std::optional<Identity> identity_of(const std::string& path, bool output) {
  if (path.empty()) return std::nullopt;
  struct stat info {};
  if (path == "-") {
    // stdin or stdout: only a regular file behind it can also be another role's file.
    if (::fstat(output ? STDOUT_FILENO : STDIN_FILENO, &info) != 0 || !S_ISREG(info.st_mode))
      return std::nullopt;
    return Identity{std::make_pair(info.st_dev, info.st_ino), {}};
  }
  if (::stat(path.c_str(), &info) == 0) {
    // A FIFO or a device is written in place, never replaced: reading and writing one is the
    // user's plumbing, not a file overwritten.
    if (!S_ISREG(info.st_mode)) return std::nullopt;
    return Identity{std::make_pair(info.st_dev, info.st_ino), {}};
  }
  auto resolved = resolved_path(path);
  if (!resolved) return std::nullopt;
  return Identity{std::nullopt, std::move(*resolved)};
}

bool same(const Identity& a, const Identity& b) {
  if (a.inode && b.inode) return *a.inode == *b.inode;
  return !a.inode && !b.inode && a.canonical == b.canonical;
}

std::string shown(const NamedFile& file, bool output) {
  return file.path == "-" ? (output ? "stdout" : "stdin") : file.path;
}

}  // namespace

std::optional<std::string> resolved_path(const std::string& path) {
  std::error_code error;
  const auto absolute = std::filesystem::absolute(path, error);
  if (error) return std::nullopt;
  const auto canonical = std::filesystem::weakly_canonical(absolute, error);
  if (error) return std::nullopt;
  return canonical.string();
}

Status check_no_output_is_an_input(const std::vector<NamedFile>& outputs,
                                   const std::vector<NamedFile>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedFile& output = outputs[i];
    const auto written = identity_of(output.path, true);
    if (!written) continue;
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      const auto other = identity_of(outputs[j].path, true);
      if (!other || !same(*written, *other)) continue;
      return make_error(ErrorKind::invalid_input,
                        output.role + " and " + outputs[j].role + " are one file (" +
                            shown(output, true) + "): the one written last would be all it holds",
                        shown(outputs[j], true));
    }
    for (const NamedFile& input : inputs) {
      const auto read = identity_of(input.path, false);
      if (!read || !same(*written, *read)) continue;
      return make_error(ErrorKind::invalid_input,
                        output.role + " (" + shown(output, true) + ") is " + input.role + " (" +
                            shown(input, false) + "), which clef reads: write to a file of its own",
                        shown(output, true));
    }
  }
  return {};
}

}  // namespace clef::cli
