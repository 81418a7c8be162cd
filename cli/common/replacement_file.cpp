// The implementation of replacement_file.hpp: replacing a file whole.
#include "common/replacement_file.hpp"
#include "common/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

namespace clef::cli {
namespace {

/// What create() names a temporary file after its path: this, then mkstemp's six characters. A
/// name no one gives a file of their own: remove_abandoned() removes what has it (".clef-"
/// alone matched a user's OUT.clef-backup, and removed it).
constexpr std::string_view temporary_suffix = ".clef-partial.";
constexpr std::size_t random_characters = 6;

/// The process's umask, from /proc (umask(2) cannot read it without setting it, which would race
/// with other threads creating files); 022 when /proc does not say.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8) & 0777);
    }
  }
  return 022;
}

/// The mode the replacement takes: the replaced file's own, or a new file's.
mode_t mode_for(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) return info.st_mode & 07777;
  return 0666 & ~current_umask();
}

}  // namespace

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

Result<ReplacementFile> ReplacementFile::create(const std::string& path) {
  // mkstemp's XXXXXX: six random characters, O_CREAT | O_EXCL (a planted file or link there
  // makes it try another name, never write through it).
  std::string pattern = path + std::string(temporary_suffix) + std::string(random_characters, 'X');
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return system_error("cannot create a temporary file beside it", path);
  // Locked while this process lives: remove_abandoned() tells a dead writer's file by its lock.
  ::flock(fd, LOCK_EX | LOCK_NB);
  return ReplacementFile(path, std::string(name.data()), fd);
}

std::size_t ReplacementFile::remove_abandoned(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string prefix =
      (slash == std::string::npos ? path : path.substr(slash + 1)) + std::string(temporary_suffix);
  DIR* listing = ::opendir(directory.c_str());
  if (!listing) return 0;
  std::size_t removed = 0;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    // create()'s names only: the prefix and mkstemp's six letters and digits.
    if (name.size() != prefix.size() + random_characters ||
        name.compare(0, prefix.size(), prefix) != 0 ||
        !std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }))
      continue;
    const int fd =
        ::openat(::dirfd(listing), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat info {};
    // Only this user's regular files that no live writer holds, with the mode mkstemp gave
    // them (commit() gives a file its final mode only as it renames it).
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == ::geteuid() &&
        (info.st_mode & 07777) == 0600 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        ::unlinkat(::dirfd(listing), name.c_str(), 0) == 0)
      ++removed;
    ::close(fd);
  }
  ::closedir(listing);
  return removed;
}

ReplacementFile::ReplacementFile(ReplacementFile&& other) noexcept
    : m_path(std::move(other.m_path)),
      m_temporary(std::move(other.m_temporary)),
      m_fd(other.m_fd),
      m_committed(other.m_committed),
      m_released(other.m_released) {
  other.m_fd = -1;
  other.m_committed = true;  // nothing left for the moved-from object to remove
}

ReplacementFile::~ReplacementFile() {
  if (!m_committed && !m_temporary.empty()) ::unlink(m_temporary.c_str());
  if (m_fd >= 0 && !m_released) ::close(m_fd);
}

Status ReplacementFile::commit() {
  if (::fsync(m_fd) != 0) return system_error("cannot write", m_temporary);
  if (::fchmod(m_fd, mode_for(m_path)) != 0) return system_error("cannot write", m_temporary);
  if (::rename(m_temporary.c_str(), m_path.c_str()) != 0)
    return system_error("cannot write", m_path);
  m_committed = true;
  return {};
}

int ReplacementFile::release() noexcept {
  m_released = true;
  return m_fd;
}

Status replace_file(const std::string& path, const std::string& text) {
  auto file = ReplacementFile::create(path);
  if (!file) return file.error();
  if (!write_all(file->fd(), text)) return system_error("cannot write", file->temporary_path());
  return file->commit();
}

}  // namespace clef::cli
