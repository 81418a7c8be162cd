// Internal: the cache's directory on disk — opened and checked fit to hold answers, its shard
// directories, the names of its entries and temporary files, and a scan of what it holds —
// with no symlink ever followed. cache.cpp reads and writes the entries; this is where they live.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "clef/result.hpp"

namespace clef::detail {

/// An entry bigger than this is not cached (a response is at most 16 MiB by default).
inline constexpr std::uint64_t max_cache_entry_bytes = 64u * 1024u * 1024u;

/// "KEY.json": 64 hex digits and the suffix.
constexpr std::size_t entry_name_size = 64 + 5;
/// ".KEY.XXXXXX": the temporary file a writer renames over KEY.json.
constexpr std::size_t temp_name_size = 1 + 64 + 1 + 6;

/// A file descriptor, closed when it goes.
class Fd {
 public:
  explicit Fd(int fd = -1) noexcept : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  Fd(Fd&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  Fd& operator=(Fd&& other) noexcept {
    std::swap(m_fd, other.m_fd);  // other closes what this held
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const noexcept { return m_fd; }
  /// Gives the descriptor up (to fdopendir, or to be closed by hand).
  int release() noexcept { return std::exchange(m_fd, -1); }
  explicit operator bool() const noexcept { return m_fd >= 0; }

 private:
  int m_fd;
};

/// Shard `name` of the cache open at `top`, never through a symlink; a closed Fd when it is not
/// there or not a directory.
Fd open_shard(int top, const std::string& name);

/// True when the directory open at `fd` may hold answers: this user's, writable by no one else
/// (looked at again on every use: one made writable by others since is neither read nor written).
bool safe_directory(int fd);
/// The same, of a directory's `info` already at hand.
bool safe_directory(const struct stat& info);

/// A regular file of this user's that no one else may write: what an entry or a pack must be to
/// be read (a file others may write could hold anything).
bool own_file(const struct stat& info);

/// The names in the directory open at `fd`, read through its own open file (no shared offset).
std::vector<std::string> names_in(int fd);

/// Removes `name` from the directory open at `directory` if it is still the file `seen` (a writer
/// may have renamed a good file over it since).
void remove_if_same(int directory, const std::string& name, const struct stat& seen);

/// The cache's 256 shard directories, each opened (and checked as open_shard checks it) the first
/// time it is needed and kept open: a lookup and a store would otherwise each open, check and
/// close their shard (a store made it first too), seven system calls of a miss's fourteen; its
/// mode is still checked on every use. Thread-safe. A descriptor handed out
/// stays open until this goes (one replaced by reopen() too), so no thread ever uses a number
/// another has closed.
class OpenShards {
 public:
  /// The shard of entry `key` (its first two hex digits), made first when `create`; -1 when it
  /// is not there (and not made) or not safe.
  int get(int top, const std::string& key, bool create);
  /// The shard of `key` opened (made) again: the one kept was removed from under it.
  int reopen(int top, const std::string& key);

 private:
  int open_locked(int top, const std::string& key, bool create);

  static constexpr std::size_t kMostReplaced = 256;

  std::mutex m_mutex;
  std::array<Fd, 256> m_open;
  std::vector<Fd> m_replaced;
};

/// One file of the cache, as a scan found it.
struct CacheFile {
  std::size_t shard = 0;  ///< Index into Scan::shards.
  std::string name;
  std::uint64_t bytes = 0;
  std::int64_t used = 0;  ///< mtime in ns: touched on every hit, so the oldest is least used
  bool temporary = false;
  bool pack = false;  ///< Many entries (cache_packs.hpp), not KEY.json.
};

/// Every entry, pack and temporary file under an open cache directory; symlinks are never
/// followed and are neither entries nor shards. The packs' directory is one of `shards`.
struct Scan {
  std::vector<std::pair<std::string, Fd>> shards;
  std::vector<CacheFile> files;

  /// Removes `file`; true when it is gone.
  bool remove(const CacheFile& file) const {
    return ::unlinkat(shards[file.shard].second.get(), file.name.c_str(), 0) == 0 ||
           errno == ENOENT;
  }
};

/// Every entry, pack and temporary file of the cache open at `top`.
Scan scan(int top);

/// Why the packs' directory of the cache open at `top` may not hold answers (a symlink, another
/// user's, writable by others, not a directory), or empty (also when there is none yet).
std::string packs_problem(int top);

/// True when the cache open at `top` has a shard directory (entries in files of their own).
bool holds_shards(int top);

/// An invalid_input error about the cache directory.
Error cache_error(const std::string& message, const std::string& directory);

/// The cache directory, open; `create` makes it (0700) when missing. Fails when it is missing
/// (and not created) or not a directory.
Result<Fd> open_directory(const std::string& directory, bool create);

/// The cache directory, open and checked fit to hold answers: a directory of this user's, that
/// no one else can write, and that this process can.
Result<Fd> open_checked(const std::string& directory);

}  // namespace clef::detail
