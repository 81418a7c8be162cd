// The implementation of files.hpp: reading a whole file the user named (questions, a state, a
// token, the run record).
#include "common/files.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "clef/digest.hpp"
#include "common/input_file.hpp"
#include "common/signals.hpp"

namespace clef::cli {
namespace {

Result<std::string> read_stream(std::istream& stream, const std::string& what,
                                const std::string& path, std::size_t max_bytes) {
  std::string text;
  char buffer[65536];
  while (stream) {
    stream.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<std::size_t>(stream.gcount()));
    if (text.size() > max_bytes) {
      const std::string limit = max_bytes >= (1u << 20) ? std::to_string(max_bytes >> 20) + " MiB"
                                                        : std::to_string(max_bytes >> 10) + " KiB";
      return make_error(ErrorKind::invalid_input, what + " is larger than " + limit, path);
    }
  }
  if (stream.bad()) return make_error(ErrorKind::invalid_input, "cannot read " + what, path);
  return text;
}

}  // namespace

Result<std::string> read_file(const std::string& path, const std::string& what, std::istream& in,
                              std::size_t max_bytes) {
  // Opened as every input is: the system's reason when it cannot be, a directory refused, and
  // a wait on a pipe or FIFO (stdin from `sleep 15 |`) ended by SIGINT/SIGTERM.
  auto file = InputFile::open(path, what, in, interrupted_flag());
  if (!file) return file.error();
  auto text = read_stream(file->stream(), what, path == "-" ? "stdin" : path, max_bytes);
  if (auto failure = file->failure()) return failure.value();
  return text;
}

OpenFiles raise_open_file_limit(std::size_t connections) {
  constexpr rlim_t reserve = 256;  // files, pipes, the loop's own descriptors
  OpenFiles result{connections, 0};
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return result;
  const rlim_t wanted = static_cast<rlim_t>(connections) + reserve;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0 || ::getrlimit(RLIMIT_NOFILE, &limit) != 0)
      return result;
  }
  result.limit = limit.rlim_cur == RLIM_INFINITY ? 0 : static_cast<std::size_t>(limit.rlim_cur);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    result.connections =
        limit.rlim_cur > reserve + 1 ? static_cast<std::size_t>(limit.rlim_cur - reserve) : 1;
  }
  return result;
}

Result<std::string> file_sha256(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::invalid_input, "cannot open " + what, path);
  Sha256Hasher hasher;
  std::string buffer(1 << 16, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) return make_error(ErrorKind::invalid_input, "cannot read " + what, path);
  return hasher.hex();
}

Error system_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::connection_failed, what + ": " + std::strerror(errno), path);
}

}  // namespace clef::cli
