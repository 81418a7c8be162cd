// The implementation of cache_packs.hpp: entries kept until a pack is due, packs written whole,
// and the index of every pack's header.
#include "store/cache_packs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <random>
#include <utility>

#include "util/write_all.hpp"

namespace clef::detail {
namespace {

using namespace std::chrono_literals;

/// Until this long after the last pack, entries wait for more.
constexpr auto pack_interval = 1s;
/// How long a lookup of a key the index does not hold trusts the last look at the directory.
constexpr auto recheck_interval = 1ms;
/// How often other writers' packs are looked for even when the directory seems unchanged (its
/// mtime moves in clock ticks: two packs renamed in one tick change it once).
constexpr auto listing_interval = 1s;

std::string name_from(std::uint64_t word) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(word));
  return text;
}

std::uint64_t random_seed() {
  std::random_device device;
  return std::uint64_t{device()} << 32 | device();
}

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

PackStore::PackStore(int top, std::uint64_t pack_bytes)
    : m_top(::fcntl(top, F_DUPFD_CLOEXEC, 0)),
      m_pack_bytes(pack_bytes),
      m_seed(random_seed()),
      m_names(random_seed()) {
  // Made now, not at the first write: a lookup then needs no system call to learn it is missing.
  ::mkdirat(top, packs_directory, 0700);
  m_directory = open_shard(top, packs_directory);
}

namespace {

/// Every store of this process, by its directory's device and inode.
struct Stores {
  std::mutex mutex;
  std::map<std::pair<dev_t, ino_t>, std::weak_ptr<PackStore>> by_directory;
  std::vector<std::weak_ptr<PackStore>> unshared;  ///< Their directory could not be fstat'ed.
};

Stores& stores();

/// At exit (a return from main, std::exit), every entry still waiting is written. The last
/// answers of a run are delivered from inside a loop handler whose stack still holds the cache
/// for a moment: the caller's thread, woken by them, could drop its Client and exit while the
/// loop thread was letting go of the last reference, and the entries it would write then were
/// lost. Whichever thread holds the store last, its waiting entries are written by now.
void write_waiting_entries_at_exit() {
  std::vector<std::shared_ptr<PackStore>> alive;
  {
    Stores& all = stores();
    std::lock_guard<std::mutex> lock(all.mutex);
    for (auto& [directory, store] : all.by_directory)
      if (auto held = store.lock()) alive.push_back(std::move(held));
    for (auto& store : all.unshared)
      if (auto held = store.lock()) alive.push_back(std::move(held));
  }
  for (auto& store : alive) store->flush();
}

/// Made once and never destroyed: a loop thread may still be letting go of a store, and
/// looking its directory up, while the process exits.
Stores& stores() {
  static Stores* const all = [] {
    auto* made = new Stores;
    std::atexit(write_waiting_entries_at_exit);
    return made;
  }();
  return *all;
}

}  // namespace

std::shared_ptr<PackStore> PackStore::of(int top, std::uint64_t pack_bytes) {
  Stores& all = stores();
  std::lock_guard<std::mutex> lock(all.mutex);
  for (auto it = all.by_directory.begin(); it != all.by_directory.end();) {
    it = it->second.expired() ? all.by_directory.erase(it) : std::next(it);
  }
  all.unshared.erase(std::remove_if(all.unshared.begin(), all.unshared.end(),
                                    [](const auto& store) { return store.expired(); }),
                     all.unshared.end());
  struct stat info {};
  if (::fstat(top, &info) != 0) {
    auto made = std::make_shared<PackStore>(top, pack_bytes);
    all.unshared.push_back(made);
    return made;
  }
  std::weak_ptr<PackStore>& slot = all.by_directory[{info.st_dev, info.st_ino}];
  if (auto existing = slot.lock()) return existing;
  auto made = std::make_shared<PackStore>(top, pack_bytes);
  slot = made;
  return made;
}

PackStore::~PackStore() {
  std::lock_guard<std::mutex> lock(m_mutex);
  flush_locked();
}

namespace {

std::array<std::uint64_t, 2> slot_key(const PackKey& key) {
  return {key[0], key[1]};
}

/// A slot's tag: its key's first word, never 0 (an empty slot).
std::uint64_t tag_of(const std::array<std::uint64_t, 2>& key) {
  return key[0] | 1u;
}

}  // namespace

std::uint32_t PackStore::clamped_time(std::int64_t seconds) {
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(seconds, 0, UINT32_MAX));
}

std::size_t PackStore::slot_for(const SlotKey& key) const {
  const std::size_t mask = m_slots.size() - 1;
  const std::uint64_t tag = tag_of(key);
  for (std::size_t i = home(key[1]) & mask;; i = (i + 1) & mask) {
    if (m_tags[i] == 0 || (m_tags[i] == tag && m_slots[i].key == key)) return i;
  }
}

std::size_t PackStore::pending_slot_locked(const PackKey& key) const {
  const std::size_t mask = m_pending_slots.size() - 1;
  for (std::size_t i = home(key[1]) & mask;; i = (i + 1) & mask) {
    const std::size_t at = m_pending_slots[i];
    if (at == 0 || m_pending[at - 1].key == key) return i;
  }
}

void PackStore::reserve_locked(std::size_t more) {
  if ((m_used + more) * 4 <= m_slots.size() * 3) return;
  // Grown, and the dead slots (forgotten entries and packs) left behind: only live ones are kept.
  const std::vector<Slot> old = std::exchange(m_slots, {});
  const std::vector<std::uint64_t> old_tags = std::exchange(m_tags, {});
  std::size_t live_slots = 0;
  for (std::size_t i = 0; i < old.size(); ++i) live_slots += old_tags[i] && live(old[i].at);
  std::size_t size = 64;
  while (size * 3 < (live_slots + more) * 4) size *= 2;
  m_slots.assign(size, Slot{});
  m_tags.assign(size, 0);
  m_used = 0;
  for (std::size_t i = 0; i < old.size(); ++i) {
    if (old_tags[i] == 0 || !live(old[i].at)) continue;
    const std::size_t at = slot_for(old[i].key);
    m_tags[at] = old_tags[i];
    m_slots[at] = old[i];
    ++m_used;
  }
}

void PackStore::index_locked(const PackKey& key, const Location& at) {
  reserve_locked(1);
  const SlotKey wanted = slot_key(key);
  const std::size_t i = slot_for(wanted);
  Slot& slot = m_slots[i];
  if (m_tags[i] == 0) {
    m_tags[i] = tag_of(wanted);
    slot = {wanted, at};
    ++m_used;
    return;
  }
  // The newest entry answers (an expired one stored again, two writers at once).
  if (!live(slot.at) || slot.at.created <= at.created) slot.at = at;
}

std::optional<PackStore::Found> PackStore::find(const PackKey& key) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (const std::size_t waiting = m_pending_slots[pending_slot_locked(key)]; waiting != 0)
    return Found{m_pending[waiting - 1].text, std::nullopt, std::nullopt};
  const auto now = std::chrono::steady_clock::now();
  // A batch that has stopped storing still has its last entries written within a second.
  if (!m_pending.empty() && now - m_last_pack >= pack_interval) flush_locked();
  // A key the index does not hold is a miss without a system call when the directory was looked
  // at within the last millisecond: an fstat per miss was a tenth of what a miss cost a batch.
  // (Nothing is read on a miss, so the directory's safety is not at stake: a key the index holds
  // is read only after the directory is looked at again, below.)
  const bool indexed = !m_slots.empty() && live(m_slots[slot_for(slot_key(key))].at);
  if (!indexed && now - m_looked_at < recheck_interval) return std::nullopt;
  int directory = refresh_locked();
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (m_slots.empty() || directory < 0) return std::nullopt;
    const Slot& slot = m_slots[slot_for(slot_key(key))];
    if (!live(slot.at)) return std::nullopt;
    const Location at = slot.at;
    const Pack& pack = m_packs[at.pack];
    // O_NONBLOCK: a FIFO planted under a pack's name must not wait for a writer.
    Fd fd(::openat(directory, pack.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat info {};
    if (fd && ::fstat(fd.get(), &info) == 0 && info.st_ino == pack.inode &&
        info.st_dev == pack.device && static_cast<std::uint64_t>(info.st_size) == pack.size &&
        own_file(info)) {
      auto text = read_pack_bytes(fd.get(), at.offset, at.length);
      if (!text) {  // an I/O error: read again by the next listing
        forget_packs_locked({at.pack});
        return std::nullopt;
      }
      if (entry_check(*text) != at.check) {
        // Damaged or edited in place: none of its entries is trusted again.
        remove_if_same(directory, pack.name, info);
        forget_packs_locked({at.pack});
        return std::nullopt;
      }
      ::futimens(fd.get(), nullptr);  // recently used
      return Found{std::move(*text), at.pack, at.created};
    }
    // Evicted by another writer, or another file under its name: listed again, once.
    forget_packs_locked({at.pack});
    m_listed_at = {};
    directory = refresh_locked();
  }
  return std::nullopt;
}

void PackStore::forget(const PackKey& key) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_slots.empty()) return;
  const std::size_t i = slot_for(slot_key(key));
  // Dead from now on: the slot stays (open addressing) until the index next grows.
  if (m_tags[i] != 0) m_slots[i].at.pack = forgotten;
}

void PackStore::discard(const Found& found) {
  if (!found.pack) return;
  std::lock_guard<std::mutex> lock(m_mutex);
  const Pack& pack = m_packs[*found.pack];
  const int directory = usable_directory_locked();
  if (directory >= 0 && !pack.name.empty()) {
    struct stat seen {};
    seen.st_dev = pack.device;
    seen.st_ino = pack.inode;
    remove_if_same(directory, pack.name, seen);
  }
  forget_packs_locked({*found.pack});
}

int PackStore::usable_directory_locked() const {
  return m_directory && safe_directory(m_directory.get()) ? m_directory.get() : -1;
}

int PackStore::refresh_locked() {
  // One fstat tells both whether the directory is still safe and whether it changed.
  struct stat info {};
  const auto now = std::chrono::steady_clock::now();
  m_looked_at = now;
  if (!m_directory || ::fstat(m_directory.get(), &info) != 0 || !safe_directory(info)) return -1;
  const int directory = m_directory.get();
  if (same_time(info.st_mtim, m_listed_change) && now - m_listed_at < listing_interval)
    return directory;
  m_listed_change = info.st_mtim;
  m_listed_at = now;
  std::vector<bool> listed(m_packs.size(), false);
  for (const std::string& name : names_in(directory)) {
    if (!is_pack_name(name)) continue;
    struct stat seen {};
    if (::fstatat(directory, name.c_str(), &seen, AT_SYMLINK_NOFOLLOW) != 0) continue;
    const auto known = m_pack_by_name.find(name);
    if (known != m_pack_by_name.end()) {
      const Pack& pack = m_packs[known->second];
      if (pack.inode == seen.st_ino && pack.device == seen.st_dev &&
          pack.size == static_cast<std::uint64_t>(seen.st_size)) {
        listed[known->second] = true;
        continue;
      }
      forget_packs_locked({known->second});  // another file under its name now
    }
    Fd fd(::openat(directory, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat opened {};
    std::optional<std::vector<PackEntry>> entries;
    const bool ours = fd && ::fstat(fd.get(), &opened) == 0 && own_file(opened);
    if (ours) entries = read_pack_header(fd.get(), static_cast<std::uint64_t>(opened.st_size));
    if (!entries) {
      // A later clef's format: neither read nor removed (it may share the directory).
      if (ours && is_other_pack_version(fd.get())) continue;
      // Not a pack clef wrote (a pack is renamed into place whole): a symlink, a FIFO, another
      // user's file, one others may write, a damaged or planted one. Never read again.
      remove_if_same(directory, name, fd ? opened : seen);
      continue;
    }
    add_pack_locked(
        {name, opened.st_dev, opened.st_ino, static_cast<std::uint64_t>(opened.st_size)}, *entries);
    listed.push_back(true);
  }
  std::vector<std::size_t> gone;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    if (!listed[i] && !m_packs[i].name.empty()) gone.push_back(i);
  }
  forget_packs_locked(gone);
  return directory;
}

void PackStore::add_pack_locked(Pack pack, const std::vector<PackEntry>& entries) {
  const auto index = static_cast<std::uint32_t>(m_packs.size());
  m_pack_by_name[pack.name] = index;
  m_packs.push_back(std::move(pack));
  reserve_locked(entries.size());
  for (const auto& entry : entries) {
    index_locked(entry.key,
                 {entry.offset, entry.check, index, static_cast<std::uint32_t>(entry.length),
                  clamped_time(entry.created)});
  }
}

void PackStore::forget_packs_locked(const std::vector<std::size_t>& packs) {
  // Their slots are dead from now on (live() is false), dropped when the index next grows.
  for (std::size_t pack : packs) {
    if (pack >= m_packs.size() || m_packs[pack].name.empty()) continue;
    m_pack_by_name.erase(m_packs[pack].name);
    m_packs[pack].name.clear();
  }
}

PackWritten PackStore::add(const PackKey& key, std::int64_t created, std::string text) {
  const std::uint64_t check = entry_check(text);
  std::lock_guard<std::mutex> lock(m_mutex);
  m_pending_bytes += text.size();
  auto& waiting = m_pending_slots[pending_slot_locked(key)];
  if (waiting == 0) {
    m_pending.push_back({key, created, std::move(text), check});
    waiting = static_cast<std::uint16_t>(m_pending.size());
  } else {
    m_pending[waiting - 1] = {key, created, std::move(text), check};
  }
  if (m_pending.size() >= most_waiting || m_pending_bytes >= m_pack_bytes ||
      std::chrono::steady_clock::now() - m_last_pack >= pack_interval) {
    return flush_locked();
  }
  return {};
}

PackWritten PackStore::flush() {
  std::lock_guard<std::mutex> lock(m_mutex);
  return flush_locked();
}

PackWritten PackStore::flush_locked() {
  if (m_pending.empty()) return {};
  std::vector<PendingEntry> entries = std::exchange(m_pending, {});
  m_pending_slots.fill(0);
  m_pending_bytes = 0;
  m_last_pack = std::chrono::steady_clock::now();
  std::vector<PackEntry> where;
  const std::string text = pack_text(entries, where);
  int directory = usable_directory_locked();
  std::string name;
  std::string temp;
  Fd fd;
  for (int attempt = 0; attempt < 8 && directory >= 0 && !fd; ++attempt) {
    name = name_from(m_names());
    temp = "." + name + ".tmp";
    fd = Fd(::openat(directory, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600));
    if (fd || errno == EEXIST) continue;
    // The directory was removed from under the store (clef cache clear does not; a person may):
    // made again, once.
    if (errno != ENOENT || m_reopened) return {};
    m_reopened = true;
    ::mkdirat(m_top.get(), packs_directory, 0700);
    m_directory = open_shard(m_top.get(), packs_directory);
    directory = usable_directory_locked();
    m_pack_by_name.clear();
    m_slots.clear();
    m_tags.clear();
    m_used = 0;
    m_packs.clear();
  }
  if (!fd) return {};
  const std::string final_name = name + ".pack";
  struct stat info {};
  const bool written = write_all(fd.get(), text) && ::fstat(fd.get(), &info) == 0;
  const bool closed = ::close(fd.release()) == 0;
  // Only a whole pack takes its name (a full disk left an empty one in place). Never over
  // another pack: a name drawn twice (one chance in 2^64) is not a reason to lose one.
  int renamed = -1;
  if (written && closed) {
    renamed = ::renameat2(directory, temp.c_str(), directory, final_name.c_str(), RENAME_NOREPLACE);
    if (renamed != 0 && (errno == EINVAL || errno == ENOSYS))
      renamed = ::renameat(directory, temp.c_str(), directory, final_name.c_str());
  }
  if (renamed != 0) {
    ::unlinkat(directory, temp.c_str(), 0);
    return {};
  }
  add_pack_locked({final_name, info.st_dev, info.st_ino, text.size()}, where);
  constexpr std::uint64_t block = 4096;
  return {entries.size(), (text.size() + block - 1) / block * block};
}

}  // namespace clef::detail
