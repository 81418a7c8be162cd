// The implementation of output_target.hpp: where an output goes, and writers that honour stops.
#include "common/output_target.hpp"
#include "common/files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace clef::cli {
namespace {

bool stopped(const std::atomic<bool>* stop) {
  return stop && stop->load();
}

constexpr std::size_t kBlock = 1 << 16;

}  // namespace

OutputPath output_path(const std::string& path) {
  OutputPath out{path, PathKind::missing, 0};
  // Replacing a link itself would leave the file it names as it was: follow the chain, to the
  // file it names even when that does not exist yet (as open(2) with O_CREAT would create it).
  for (int hops = 0; hops < 40; ++hops) {
    struct stat link {};
    if (::lstat(out.path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) break;
    char target[PATH_MAX];
    const ssize_t n = ::readlink(out.path.c_str(), target, sizeof target - 1);
    if (n <= 0) break;
    std::string next(target, static_cast<std::size_t>(n));
    if (next.front() != '/') {
      const auto slash = out.path.rfind('/');
      next = (slash == std::string::npos ? std::string() : out.path.substr(0, slash + 1)) + next;
    }
    out.path = next;
  }
  struct stat info {};
  if (::stat(out.path.c_str(), &info) != 0) return out;
  out.kind = path_kind(out.path);
  out.size = static_cast<std::uint64_t>(info.st_size);
  return out;
}

std::optional<int> descriptor_named(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size() ||
        path.size() > prefix.size() + 6)
      continue;
    int fd = 0;
    for (std::size_t i = prefix.size(); i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9') return std::nullopt;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return std::nullopt;
}

Status StreamWriter::write_line(std::string_view line) {
  m_out.write(line.data(), static_cast<std::streamsize>(line.size()));
  m_out.put('\n');
  if (!m_out) return make_error(ErrorKind::connection_failed, "cannot write", "stdout");
  return {};
}

Status StreamWriter::flush() {
  m_out.flush();
  if (!m_out) return make_error(ErrorKind::connection_failed, "cannot write", "stdout");
  return {};
}

Result<int> open_in_place(const std::string& path, const std::atomic<bool>* stop) {
  // O_NONBLOCK: a FIFO without a reader refuses at once (ENXIO) instead of holding clef deaf to
  // signals in open(2); it is tried again a tenth of a second at a time. Write only: a FIFO
  // whose reader leaves then fails the next write (EPIPE) instead of filling for ever.
  for (;;) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) return fd;
    if (errno != ENXIO && errno != EINTR) return system_error("cannot open the output", path);
    if (stopped(stop)) {
      return make_error(ErrorKind::cancelled, "stopped while waiting for a reader", path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Result<FdWriter> FdWriter::open(const std::string& path, const std::atomic<bool>* stop) {
  std::optional<int> fd;
  if (auto named = descriptor_named(path)) {
    // The shell's own descriptor, its offset and O_APPEND kept: written through a copy.
    const int copy = ::fcntl(*named, F_DUPFD_CLOEXEC, 3);
    if (copy < 0) return system_error("cannot write to", path);
    fd = copy;
  } else {
    auto opened = open_in_place(path, stop);
    if (!opened) return opened.error();
    fd = opened.value();
  }
  FdWriter writer(*fd, stop);
  writer.m_owned = true;
  writer.m_path = path;
  return writer;
}

FdWriter::FdWriter(FdWriter&& other) noexcept
    : m_fd(other.m_fd),
      m_stop(other.m_stop),
      m_owned(other.m_owned),
      m_path(std::move(other.m_path)),
      m_pending(std::move(other.m_pending)) {
  other.m_owned = false;
}

FdWriter::~FdWriter() {
  if (m_owned) ::close(m_fd);
}

Status FdWriter::write_line(std::string_view line) {
  m_pending.append(line);
  m_pending += '\n';
  if (m_pending.size() < kBlock) return {};
  return flush();
}

Status FdWriter::flush() {
  Status written = write_out(m_pending);
  m_pending.clear();
  return written;
}

Status FdWriter::write_out(std::string_view bytes) {
  const std::string where = m_path.empty() ? "the output" : m_path;
  while (!bytes.empty()) {
    const ssize_t n = ::write(m_fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno != EINTR && errno != EAGAIN) return system_error("cannot write", where);
    if (stopped(m_stop)) {
      return make_error(ErrorKind::cancelled, "stopped while waiting to write", where);
    }
    pollfd watched{m_fd, POLLOUT, 0};
    ::poll(&watched, 1, 100);
  }
  return {};
}

}  // namespace clef::cli
