// The implementation of clef/cache.hpp's cache_stats and clear_cache: what a cache directory
// holds, counted by key, and emptying it — never through a symlink.
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <unordered_set>

#include "clef/cache.hpp"
#include "store/cache_directory.hpp"
#include "store/pack_format.hpp"

namespace clef {
namespace {

using detail::cache_error;
using detail::CacheFile;
using detail::Fd;
using detail::open_directory;
using detail::scan;
using detail::Scan;

/// Adds the keys `file` holds entries for: its name's, or those its header lists.
void add_keys(const Scan& found, const CacheFile& file, std::unordered_set<std::string>& keys) {
  if (!file.pack) {
    keys.insert(file.name.substr(0, 64));
    return;
  }
  const int directory = found.shards[file.shard].second.get();
  Fd fd(::openat(directory, file.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info {};
  if (!fd || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return;
  const auto entries = detail::read_pack_header(fd.get(), static_cast<std::uint64_t>(info.st_size));
  if (!entries) return;
  for (const auto& entry : *entries) keys.insert(detail::key_hex(entry.key));
}

/// The cache directory `directory`, to be counted or emptied: it must exist, and so must its
/// packs' directory be safe (a refused one would be neither read nor written by a run).
Result<Fd> open_existing(const std::string& directory) {
  auto top = open_directory(directory, false);
  if (!top) return top.error();
  if (const std::string why = detail::packs_problem(top->get()); !why.empty())
    return cache_error("the cache directory " + directory + " is refused: " + why, directory);
  return top;
}

}  // namespace

Result<CacheStats> cache_stats(const std::string& directory) {
  auto top = open_existing(directory);
  if (!top) return top.error();
  const Scan found = scan(top->get());
  std::unordered_set<std::string> keys;
  CacheStats stats;
  for (const auto& file : found.files) {
    if (file.temporary) continue;
    add_keys(found, file, keys);
    stats.bytes += file.bytes;
  }
  stats.entries = keys.size();
  return stats;
}

Result<CacheStats> clear_cache(const std::string& directory) {
  auto top = open_existing(directory);
  if (!top) return top.error();
  const Scan found = scan(top->get());
  std::unordered_set<std::string> keys;
  CacheStats removed;
  for (const auto& file : found.files) {
    if (!file.temporary) add_keys(found, file, keys);
    if (!found.remove(file)) {
      const std::string path = directory + "/" + found.shards[file.shard].first + "/" + file.name;
      return cache_error("cannot remove " + path + ": " + std::strerror(errno), path);
    }
    if (!file.temporary) removed.bytes += file.bytes;
  }
  removed.entries = keys.size();
  return removed;
}

}  // namespace clef
