// Internal: the cache's entries in packs — many entries to a file, each pack written whole and
// renamed into place, never changed after — and the index of what the packs hold. A file per
// entry made every miss of a batch create a file: ~50 µs of system time on ext4, more than the
// rest of a decision; a pack is one file for up to 512 entries (or a second's worth).
//
// A pack, "packs/<16 hex>.pack":
//
//     clef-cache-pack 1 N\n
//     <KEY, 64 hex> <offset> <length> <created> <check>\n   N lines: where each entry is
//     <entry>\n                                              N entries, each a cache entry's JSON
//
// An offset counts from the first byte after the N lines; created is the entry's Unix time;
// check is the first 16 hex digits of the entry's SHA-256, so that an entry damaged or edited
// in place is never read as another answer (it is no lock: whoever can write the directory can
// write a check too, which is why the directory must be the user's own).
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/cache_directory.hpp"

namespace clef::detail {

/// The cache's subdirectory that holds its packs.
inline constexpr const char* packs_directory = "packs";

/// "<16 hex>.pack", as PackStore names its packs.
bool is_pack_name(const std::string& name);
/// ".<16 hex>.tmp", the temporary file a pack is written to before it is renamed.
bool is_pack_temp_name(const std::string& name);

/// An entry as a pack's header lists it.
struct PackEntry {
  std::string key;
  std::uint64_t offset = 0;  ///< From the start of the file.
  std::uint64_t length = 0;
  std::int64_t created = 0;
  std::string check;  ///< 16 hex digits: the start of the entry's SHA-256.
};

/// The check a pack's header holds for an entry's text.
std::string entry_check(std::string_view text);

/// The entries the pack open at `fd` (`size` bytes) lists, each checked to lie within it; nothing
/// when it is not a pack clef wrote (damaged, planted, cut short).
std::optional<std::vector<PackEntry>> read_pack_header(int fd, std::uint64_t size);

/// An entry waiting to be written in the next pack.
struct PendingEntry {
  std::string key;
  std::int64_t created = 0;
  std::string text;
};

/// The bytes of a pack holding `entries`; `where` is set to where each lies in it.
std::string pack_text(const std::vector<PendingEntry>& entries, std::vector<PackEntry>& where);

/// What a flush wrote: counted against the cache's cap.
struct PackWritten {
  std::uint64_t entries = 0;
  std::uint64_t disk_bytes = 0;
};

/// The packs of one cache: entries kept in memory until a pack is due, then written in one; a
/// lookup finds them there, in this process's packs or in any other writer's. Thread-safe.
///
/// A pack is written when 512 entries or `pack_bytes` wait, or at the first entry a second or
/// more after the last pack (so a process storing one answer writes it at once), and when the
/// store goes. Other processes' packs are seen when the directory changes, and at least once a
/// second.
class PackStore {
 public:
  /// The packs of the cache open at `top` (the directory is made 0700 when missing).
  PackStore(int top, std::uint64_t pack_bytes);
  ~PackStore();
  PackStore(const PackStore&) = delete;
  PackStore& operator=(const PackStore&) = delete;

  /// An entry as stored, and where it came from.
  struct Found {
    std::string text;
    std::optional<std::size_t> pack;  ///< None: still waiting in memory.
  };

  /// The newest entry stored for `key`, or nothing. Touches its pack (recently used).
  std::optional<Found> find(const std::string& key);
  /// Forgets the entry `key` was found in: it was read and is not an answer (its pack stays).
  void forget(const std::string& key);
  /// Removes the pack `found` came from: it holds bytes that are not an entry (damaged, edited).
  void discard(const Found& found);
  /// Keeps `text` as the entry for `key`; what a pack written now took.
  PackWritten add(std::string key, std::int64_t created, std::string text);
  /// Writes every waiting entry in a pack now.
  PackWritten flush();

 private:
  using Key = std::array<std::uint64_t, 4>;
  struct KeyHash {
    std::size_t operator()(const Key& key) const noexcept { return key[0]; }
  };
  struct Location {
    std::uint32_t pack = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::int64_t created = 0;
    std::uint64_t check = 0;
  };
  struct Pack {
    std::string name;
    dev_t device = 0;
    ino_t inode = 0;
    std::uint64_t size = 0;
    bool listed = true;  ///< Still in the directory at the last listing.
  };

  static std::optional<Key> key_of(const std::string& hex);
  int directory_locked();
  /// Lists the directory again when it changed (or a second passed); the directory, or -1 when
  /// it is not safe to use.
  int refresh_locked();
  void add_pack_locked(Pack pack, const std::vector<PackEntry>& entries);
  void index_locked(const Key& key, const Location& location);
  void forget_packs_locked(const std::vector<std::size_t>& packs);
  PackWritten flush_locked();

  const int m_top;
  const std::uint64_t m_pack_bytes;
  std::mutex m_mutex;
  Fd m_directory;
  bool m_reopened = false;  ///< The directory was made again once: not again.
  std::vector<Pack> m_packs;
  std::unordered_map<std::string, std::size_t> m_pack_by_name;
  std::unordered_map<Key, Location, KeyHash> m_index;
  struct timespec m_listed_change {};  ///< The directory's mtime at the last listing.
  std::chrono::steady_clock::time_point m_listed_at{};
  std::vector<PendingEntry> m_pending;
  std::unordered_map<std::string, std::size_t> m_pending_by_key;
  std::uint64_t m_pending_bytes = 0;
  std::chrono::steady_clock::time_point m_last_pack{};
};

}  // namespace clef::detail
