// Internal: the cache's entries in packs — many entries to a file, each pack written whole and
// renamed into place, never changed after — and the index of what the packs hold. A file per
// entry made every miss of a batch create a file: ~50 µs of system time on ext4, more than the
// rest of a decision; a pack is one file for up to 512 entries (or a second's worth).
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/cache_directory.hpp"
#include "store/pack_format.hpp"

namespace clef::detail {

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
/// store goes. Other processes' packs are seen when the directory changes (looked at for a key
/// the index does not hold at most once a millisecond), and at least once a second.
class PackStore {
 public:
  /// A pack is written when this many entries wait.
  static constexpr std::size_t most_waiting = 512;

  /// The packs of the cache open at `top` (the directory is made 0700 when missing; `top` is
  /// duplicated, not kept).
  PackStore(int top, std::uint64_t pack_bytes);

  /// The store of the cache directory open at `top`, shared by every cache on that directory in
  /// this process while one lives: an entry one of them keeps waiting for its pack answers the
  /// others at once (a Client made after another on one directory found the first's last
  /// answers missing until its loop let go of it). Every store made here writes what waits
  /// when the process exits (std::exit, a return from main), whoever still holds it.
  static std::shared_ptr<PackStore> of(int top, std::uint64_t pack_bytes);
  ~PackStore();
  PackStore(const PackStore&) = delete;
  PackStore& operator=(const PackStore&) = delete;

  /// An entry as stored, and where it came from.
  struct Found {
    std::string text;
    std::optional<std::size_t> pack;  ///< None: still waiting in memory.
    /// The time its pack's header gives it (clamped to 32 bits), which chose it as the newest:
    /// the entry's own must be the same, or the pack is damaged.
    std::optional<std::uint32_t> listed_created;
  };

  /// A Unix time as the index keeps it: only compared, so clamped to 32 bits.
  static std::uint32_t clamped_time(std::int64_t seconds);

  /// The newest entry stored for `key`, or nothing. Touches its pack (recently used).
  std::optional<Found> find(const PackKey& key);
  /// Forgets the entry `key` was found in: it was read and is not an answer (its pack stays).
  void forget(const PackKey& key);
  /// Removes the pack `found` came from: it holds bytes that are not an entry (damaged, edited).
  void discard(const Found& found);
  /// Keeps `text` as the entry for `key`; what a pack written now took.
  PackWritten add(const PackKey& key, std::int64_t created, std::string text);
  /// Writes every waiting entry in a pack now.
  PackWritten flush();

 private:
  /// A key's first 128 bits: enough to tell any number of keys apart (an entry's own key is
  /// checked when it is read), in half the space.
  using SlotKey = std::array<std::uint64_t, 2>;
  static constexpr std::uint32_t empty_slot = UINT32_MAX;
  static constexpr std::uint32_t forgotten = UINT32_MAX - 1;
  struct Location {
    std::uint64_t offset = 0;
    std::uint64_t check = 0;
    std::uint32_t pack = empty_slot;  ///< Or forgotten: the entry is not read again.
    std::uint32_t length = 0;         ///< At most 64 MiB.
    std::uint32_t created = 0;        ///< Unix time, clamped: only compared.
  };
  /// A slot of the index (a node per entry made a full cache's first lookup take 0.7 s, most of
  /// it allocating, hashing and freeing nodes).
  struct Slot {
    SlotKey key{};
    Location at;
  };
  struct Pack {
    std::string name;  ///< Empty once forgotten: its slots are then dead.
    dev_t device = 0;
    ino_t inode = 0;
    std::uint64_t size = 0;
  };

  bool live(const Location& at) const {
    return at.pack < m_packs.size() && !m_packs[at.pack].name.empty();
  }
  /// Where a key's probe starts: a word of the key (a SHA-256) mixed with this store's random
  /// seed, so that keys written to collide cannot line up.
  std::size_t home(std::uint64_t word) const {
    const std::uint64_t mixed = (word ^ m_seed) * 0x9E3779B97F4A7C15u;
    return static_cast<std::size_t>(mixed ^ mixed >> 32);
  }
  /// The index's slot holding `key`, or the empty one where it would go.
  std::size_t slot_for(const SlotKey& key) const;
  /// The pending table's slot holding `key`, or the empty one where it would go.
  std::size_t pending_slot_locked(const PackKey& key) const;
  void reserve_locked(std::size_t more);
  void index_locked(const PackKey& key, const Location& at);
  /// The packs' directory, or -1 when it is gone or no longer safe to use.
  int usable_directory_locked() const;
  /// Lists the directory again when it changed (or a second passed); the directory, or -1 when
  /// it is not safe to use.
  int refresh_locked();
  void add_pack_locked(Pack pack, const std::vector<PackEntry>& entries);
  void forget_packs_locked(const std::vector<std::size_t>& packs);
  PackWritten flush_locked();

  const Fd m_top;
  const std::uint64_t m_pack_bytes;
  std::mutex m_mutex;
  Fd m_directory;
  bool m_reopened = false;  ///< The directory was made again once: not again.
  std::vector<Pack> m_packs;
  std::unordered_map<std::string, std::size_t> m_pack_by_name;
  const std::uint64_t m_seed;
  /// Draws the packs' names (under m_mutex): the store's own, not a thread's, so that a pack
  /// written at exit (of()'s hook) uses nothing the exiting thread has already let go of.
  std::mt19937_64 m_names;
  /// The index: open addressing over two arrays of one length, a power of two, at most three
  /// quarters used. A probe reads `m_tags` alone (a slot's key's first word, never 0 — 0 is an
  /// empty slot — eight to a cache line) and a slot only when its tag is the key's: a miss
  /// probing 48-byte slots read a cache line or more per probe, the largest part of a lookup.
  std::vector<std::uint64_t> m_tags;
  std::vector<Slot> m_slots;
  std::size_t m_used = 0;              ///< Slots used, live or dead.
  struct timespec m_listed_change {};  ///< The directory's mtime at the last listing.
  std::chrono::steady_clock::time_point m_listed_at{};
  std::chrono::steady_clock::time_point m_looked_at{};  ///< The directory's last fstat.
  std::vector<PendingEntry> m_pending;  ///< At most most_waiting: then they are written.
  /// Where each waiting entry lies in m_pending (its index + 1; 0: an empty slot), by key: open
  /// addressing in twice as many slots as entries wait (a map of nodes keyed by the key's hex was
  /// an allocation and a 64-byte hash per miss).
  std::array<std::uint16_t, 2 * most_waiting> m_pending_slots{};
  std::uint64_t m_pending_bytes = 0;
  std::chrono::steady_clock::time_point m_last_pack{};
};

}  // namespace clef::detail
