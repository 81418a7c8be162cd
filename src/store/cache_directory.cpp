// The implementation of cache_directory.hpp: the cache's directory, its shards and a scan of it.
#include "store/cache_directory.hpp"

#include "store/pack_format.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace clef::detail {
namespace {

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

/// Why a directory may not hold answers (another user could write what clef reads), or empty.
std::string unsafe_directory(const struct stat& info) {
  // Asked once: a shard is looked at on every lookup and store, and clef never changes user.
  static const uid_t user = ::geteuid();
  if (!S_ISDIR(info.st_mode)) return "it is not a directory";
  if (info.st_uid != user) {
    return "it is not owned by you (uid " + std::to_string(user) + ") but by uid " +
           std::to_string(info.st_uid) + ", who could plant answers in it";
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "it is writable by group or others (mode " + octal_mode(info.st_mode) +
           "), who could plant answers in it: chmod go-w it";
  }
  return {};
}

bool is_hex(const std::string& text, std::size_t from, std::size_t count) {
  for (std::size_t i = from; i < from + count; ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

/// Only two-hex-digit names are shards: ".." is two characters too, and is the parent.
bool is_shard_name(const std::string& name) {
  return name.size() == 2 && is_hex(name, 0, 2);
}

/// KEY.json, KEY 64 hex digits beginning with the shard's two.
bool is_entry_name(const std::string& name, const std::string& shard) {
  return name.size() == entry_name_size && name.compare(64, 5, ".json") == 0 &&
         is_hex(name, 0, 64) && name.compare(0, 2, shard) == 0;
}

/// .KEY.XXXXXX, as store() names its temporary files.
bool is_temp_name(const std::string& name, const std::string& shard) {
  return name.size() == temp_name_size && name[0] == '.' && name[65] == '.' &&
         is_hex(name, 1, 64) && name.compare(1, 2, shard) == 0;
}

std::int64_t mtime_ns(const struct stat& info) {
  return static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
}

/// The space a file takes on disk: what fills a disk, unlike its size.
std::uint64_t disk_bytes(const struct stat& info) {
  return static_cast<std::uint64_t>(info.st_blocks) * 512u;
}

}  // namespace

std::vector<std::string> names_in(int fd) {
  std::vector<std::string> names;
  Fd own(::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!own) return names;
  DIR* dir = ::fdopendir(own.get());
  if (!dir) return names;
  own.release();
  while (dirent* item = ::readdir(dir)) names.emplace_back(item->d_name);
  ::closedir(dir);
  return names;
}

bool own_file(const struct stat& info) {
  static const uid_t user = ::geteuid();
  return S_ISREG(info.st_mode) && info.st_uid == user && (info.st_mode & 022) == 0;
}

/// Shard `name` of the cache open at `top`, never through a symlink, and only when it is safe
/// (a shard another user could write would let them plant answers).
Fd open_shard(int top, const std::string& name) {
  Fd shard(::openat(top, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat info {};
  if (!shard || ::fstat(shard.get(), &info) != 0 || !unsafe_directory(info).empty()) return Fd();
  return shard;
}

bool safe_directory(int fd) {
  struct stat info {};
  return ::fstat(fd, &info) == 0 && unsafe_directory(info).empty();
}

bool safe_directory(const struct stat& info) {
  return unsafe_directory(info).empty();
}

void remove_if_same(int directory, const std::string& name, const struct stat& seen) {
  struct stat now {};
  if (::fstatat(directory, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
      now.st_ino == seen.st_ino && now.st_dev == seen.st_dev) {
    ::unlinkat(directory, name.c_str(), 0);
  }
}

namespace {

/// 0–255 from the key's first two hex digits; -1 when they are not hex.
int shard_index(const std::string& key) {
  const auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (key.size() < 2 || digit(key[0]) < 0 || digit(key[1]) < 0) return -1;
  return digit(key[0]) * 16 + digit(key[1]);
}

}  // namespace

int OpenShards::get(int top, const std::string& key, bool create) {
  const int index = shard_index(key);
  if (index < 0) return -1;
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!m_open[index]) return open_locked(top, key, create);
  // Looked at again on every use (one fstat, not an open and a close): a shard made writable by
  // others since is not read from or written to.
  if (!safe_directory(m_open[index].get())) return -1;
  return m_open[index].get();
}

int OpenShards::reopen(int top, const std::string& key) {
  const int index = shard_index(key);
  if (index < 0) return -1;
  std::lock_guard<std::mutex> lock(m_mutex);
  // Removed again and again (someone deleting shards in a loop): stop keeping descriptors for
  // it rather than hold one more each time; its entries are then not stored.
  if (m_replaced.size() >= kMostReplaced) return -1;
  if (m_open[index]) m_replaced.push_back(std::move(m_open[index]));
  return open_locked(top, key, true);
}

int OpenShards::open_locked(int top, const std::string& key, bool create) {
  const int index = shard_index(key);
  const std::string name = key.substr(0, 2);
  if (create && ::mkdirat(top, name.c_str(), 0700) != 0 && errno != EEXIST) return -1;
  m_open[index] = open_shard(top, name);
  return m_open[index] ? m_open[index].get() : -1;
}

Scan scan(int top) {
  Scan out;
  for (const std::string& name : names_in(top)) {
    if (!is_shard_name(name) && name != packs_directory) continue;
    Fd shard = open_shard(top, name);
    if (shard) out.shards.emplace_back(name, std::move(shard));
  }
  for (std::size_t s = 0; s < out.shards.size(); ++s) {
    const std::string& shard_name = out.shards[s].first;
    const bool packs = shard_name == packs_directory;
    for (const std::string& name : names_in(out.shards[s].second.get())) {
      const bool entry = packs ? is_pack_name(name) : is_entry_name(name, shard_name);
      if (!entry && !(packs ? is_pack_temp_name(name) : is_temp_name(name, shard_name))) continue;
      struct stat info {};
      if (::fstatat(out.shards[s].second.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
          S_ISDIR(info.st_mode)) {
        continue;
      }
      // A symlink, a FIFO or a device under an entry's name is never read; it is swept like a
      // killed writer's file (its link or node removed, never what it points at).
      const bool regular = S_ISREG(info.st_mode);
      out.files.push_back({s, name, regular ? disk_bytes(info) : 0, regular ? mtime_ns(info) : 0,
                           !entry || !regular, packs && entry && regular});
    }
  }
  return out;
}

std::string packs_problem(int top) {
  struct stat info {};
  if (::fstatat(top, packs_directory, &info, AT_SYMLINK_NOFOLLOW) != 0) return {};  // none yet
  if (S_ISLNK(info.st_mode)) return "its packs/ is a symbolic link";
  const std::string why = unsafe_directory(info);
  return why.empty() ? std::string() : "its packs/ is refused: " + why;
}

bool holds_shards(int top) {
  const auto names = names_in(top);
  return std::any_of(names.begin(), names.end(), is_shard_name);
}

Error cache_error(const std::string& message, const std::string& directory) {
  return make_error(ErrorKind::invalid_input, message, directory);
}

/// The cache directory, open; `create` makes it (0700) when missing. Fails when it is missing
/// (and not created) or not a directory.
Result<Fd> open_directory(const std::string& directory, bool create) {
  if (directory.empty()) return cache_error("no cache directory given", directory);
  Fd top(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top && errno == ENOENT && create) {
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
      return cache_error(
          "cannot create the cache directory " + directory + ": " + std::strerror(errno),
          directory);
    }
    top = Fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  if (!top) {
    const int error = errno;
    if (error == ENOENT) return cache_error("there is no cache directory " + directory, directory);
    if (error == ENOTDIR) return cache_error(directory + " is not a directory", directory);
    return cache_error("cannot open the cache directory " + directory + ": " + std::strerror(error),
                       directory);
  }
  return top;
}

/// The cache directory, open and checked fit to hold answers.
Result<Fd> open_checked(const std::string& directory) {
  auto top = open_directory(directory, true);
  if (!top) return top.error();
  struct stat info {};
  if (::fstat(top->get(), &info) != 0) {
    return cache_error("cannot read " + directory + ": " + std::strerror(errno), directory);
  }
  if (const std::string why = unsafe_directory(info); !why.empty()) {
    return cache_error("the cache directory " + directory + " is refused: " + why, directory);
  }
  if (const std::string why = packs_problem(top->get()); !why.empty()) {
    return cache_error("the cache directory " + directory + " is refused: " + why, directory);
  }
  // Its packs/ made now, not at the first write: root passes faccessat in /proc or /sys, where
  // nothing can be made, and the run then cached nothing with no word said.
  if (::faccessat(AT_FDCWD, directory.c_str(), W_OK | X_OK, AT_EACCESS) != 0 ||
      (::mkdirat(top->get(), packs_directory, 0700) != 0 && errno != EEXIST)) {
    return cache_error(
        "cannot write to the cache directory " + directory + ": " + std::strerror(errno),
        directory);
  }
  return top;
}

}  // namespace clef::detail
