// The implementation of cache_packs.hpp: packs written whole, read by their headers, and the
// index of what they hold.
#include "store/cache_packs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <string_view>
#include <utility>

#include "util/sha256_bytes.hpp"
#include "util/write_all.hpp"

namespace clef::detail {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view pack_magic = "clef-cache-pack 1 ";
/// A pack is written when this many entries wait.
constexpr std::size_t pack_entries = 512;
/// A header listing more is not one clef wrote.
constexpr std::uint64_t most_listed = 4096;
/// The longest line of a header: a key, three numbers of up to 20 characters, a check, their
/// separators.
constexpr std::uint64_t longest_header_line = 64 + 3 * 21 + 17 + 1;
/// Until this long after the last pack, entries wait for more.
constexpr auto pack_interval = 1s;
/// How often other writers' packs are looked for even when the directory seems unchanged (its
/// mtime moves in clock ticks: two packs renamed in one tick change it once).
constexpr auto listing_interval = 1s;

bool is_lower_hex(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

/// Digits only, no sign, no overflow.
std::optional<std::uint64_t> read_whole(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::optional<std::int64_t> read_signed(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  const auto magnitude = read_whole(negative ? text.substr(1) : text);
  if (!magnitude || *magnitude > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return negative ? -static_cast<std::int64_t>(*magnitude) : static_cast<std::int64_t>(*magnitude);
}

/// The next field of `line` up to `separator`, consumed; nothing when there is no separator.
std::optional<std::string_view> next_field(std::string_view& line, char separator) {
  const auto end = line.find(separator);
  if (end == std::string_view::npos) return std::nullopt;
  const auto field = line.substr(0, end);
  line.remove_prefix(end + 1);
  return field;
}

/// `bytes` bytes at `offset`, or nothing when the file is shorter.
std::optional<std::string> read_at(int fd, std::uint64_t offset, std::uint64_t bytes) {
  std::string text(static_cast<std::size_t>(bytes), '\0');
  std::size_t have = 0;
  while (have < text.size()) {
    const ssize_t n =
        ::pread(fd, &text[have], text.size() - have, static_cast<off_t>(offset + have));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    have += static_cast<std::size_t>(n);
  }
  return text;
}

/// "KEY OFFSET LENGTH CREATED", each as pack_text writes it; the offset still from the header's
/// end.
std::optional<PackEntry> read_header_line(std::string_view line) {
  const auto key = next_field(line, ' ');
  const auto offset = next_field(line, ' ');
  const auto length = next_field(line, ' ');
  if (!key || key->size() != 64 || !is_lower_hex(*key) || !offset || !length) return std::nullopt;
  PackEntry entry;
  entry.key = std::string(*key);
  const auto offset_value = read_whole(*offset);
  const auto length_value = read_whole(*length);
  const auto created_text = next_field(line, ' ');
  const auto created = created_text ? read_signed(*created_text) : std::nullopt;
  if (!offset_value || !length_value || !created || line.size() != 16 || !is_lower_hex(line))
    return std::nullopt;
  entry.check = std::string(line);
  entry.offset = *offset_value;
  entry.length = *length_value;
  entry.created = *created;
  if (entry.length == 0 || entry.length > max_cache_entry_bytes) return std::nullopt;
  return entry;
}

std::uint64_t check_value(std::string_view hex) {
  std::uint64_t value = 0;
  for (char c : hex) value = value << 4 | static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  return value;
}

std::string random_name() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(random()));
  return text;
}

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/// The names in the directory open at `fd`, read through its own open file (no shared offset).
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

}  // namespace

bool is_pack_name(const std::string& name) {
  return name.size() == 16 + 5 && name.compare(16, 5, ".pack") == 0 &&
         is_lower_hex(std::string_view(name).substr(0, 16));
}

bool is_pack_temp_name(const std::string& name) {
  return name.size() == 1 + 16 + 4 && name[0] == '.' && name.compare(17, 4, ".tmp") == 0 &&
         is_lower_hex(std::string_view(name).substr(1, 16));
}

std::optional<std::vector<PackEntry>> read_pack_header(int fd, std::uint64_t size) {
  const auto first = read_at(fd, 0, std::min<std::uint64_t>(size, pack_magic.size() + 6));
  if (!first || first->compare(0, pack_magic.size(), pack_magic) != 0) return std::nullopt;
  std::string_view count_line = std::string_view(*first).substr(pack_magic.size());
  const auto count_text = next_field(count_line, '\n');
  const auto count = count_text ? read_whole(*count_text) : std::nullopt;
  // Written as clef writes it (no leading zero): the header's size follows from it.
  if (!count || *count == 0 || *count > most_listed || std::to_string(*count) != *count_text)
    return std::nullopt;
  const std::uint64_t first_line = pack_magic.size() + count_text->size() + 1;
  const auto header =
      read_at(fd, 0, std::min<std::uint64_t>(size, first_line + *count * longest_header_line));
  if (!header) return std::nullopt;
  std::string_view rest = std::string_view(*header).substr(first_line);
  std::vector<PackEntry> entries;
  entries.reserve(static_cast<std::size_t>(*count));
  for (std::uint64_t i = 0; i < *count; ++i) {
    auto line = next_field(rest, '\n');
    if (!line) return std::nullopt;
    auto entry = read_header_line(*line);
    if (!entry) return std::nullopt;
    entries.push_back(std::move(*entry));
  }
  const std::uint64_t body = header->size() - rest.size();
  for (auto& entry : entries) {
    if (entry.offset > size - body || entry.length > size - body - entry.offset)
      return std::nullopt;
    entry.offset += body;
  }
  return entries;
}

std::string entry_check(std::string_view text) {
  return to_hex(sha256(text)).substr(0, 16);
}

std::string pack_text(const std::vector<PendingEntry>& entries, std::vector<PackEntry>& where) {
  std::string header = std::string(pack_magic) + std::to_string(entries.size()) + "\n";
  std::string body;
  where.clear();
  for (const auto& entry : entries) {
    where.push_back({entry.key, body.size(), entry.text.size(), entry.created, entry_check(entry.text)});
    header += entry.key + ' ' + std::to_string(body.size()) + ' ' +
              std::to_string(entry.text.size()) + ' ' + std::to_string(entry.created) + ' ' +
              where.back().check + '\n';
    body += entry.text;
    body += '\n';
  }
  for (auto& entry : where) entry.offset += header.size();
  return header + body;
}

PackStore::PackStore(int top, std::uint64_t pack_bytes) : m_top(top), m_pack_bytes(pack_bytes) {
  // Made now, not at the first write: a lookup then needs no system call to learn it is missing.
  ::mkdirat(top, packs_directory, 0700);
  m_directory = open_shard(top, packs_directory);
}

PackStore::~PackStore() {
  std::lock_guard<std::mutex> lock(m_mutex);
  flush_locked();
}

std::optional<PackStore::Key> PackStore::key_of(const std::string& hex) {
  if (hex.size() != 64 || !is_lower_hex(hex)) return std::nullopt;
  Key key{};
  for (std::size_t word = 0; word < 4; ++word) {
    for (std::size_t i = 0; i < 16; ++i) {
      const char c = hex[word * 16 + i];
      key[word] = key[word] << 4 | static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
  }
  return key;
}

int PackStore::directory_locked() {
  return m_directory && safe_directory(m_directory.get()) ? m_directory.get() : -1;
}

std::optional<PackStore::Found> PackStore::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (const auto waiting = m_pending_by_key.find(key); waiting != m_pending_by_key.end()) {
    return Found{m_pending[waiting->second].text, std::nullopt};
  }
  // A batch that has stopped storing still has its last entries written within a second.
  if (!m_pending.empty() && std::chrono::steady_clock::now() - m_last_pack >= pack_interval)
    flush_locked();
  const auto wanted = key_of(key);
  if (!wanted) return std::nullopt;
  int directory = refresh_locked();
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto indexed = m_index.find(*wanted);
    if (indexed == m_index.end() || directory < 0) return std::nullopt;
    const Location at = indexed->second;
    const Pack& pack = m_packs[at.pack];
    // O_NONBLOCK: a FIFO planted under a pack's name must not wait for a writer.
    Fd fd(::openat(directory, pack.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat info {};
    if (fd && ::fstat(fd.get(), &info) == 0 && info.st_ino == pack.inode &&
        info.st_dev == pack.device && static_cast<std::uint64_t>(info.st_size) == pack.size) {
      auto text = read_at(fd.get(), at.offset, at.length);
      if (!text) {  // an I/O error: read again by the next listing
        forget_packs_locked({at.pack});
        return std::nullopt;
      }
      if (check_value(entry_check(*text)) != at.check) {
        // Damaged or edited in place: none of its entries is trusted again.
        remove_if_same(directory, pack.name, info);
        forget_packs_locked({at.pack});
        return std::nullopt;
      }
      ::futimens(fd.get(), nullptr);  // recently used
      return Found{std::move(*text), at.pack};
    }
    // Evicted by another writer, or another file under its name: listed again, once.
    forget_packs_locked({at.pack});
    m_listed_at = {};
    directory = refresh_locked();
  }
  return std::nullopt;
}

void PackStore::forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (const auto wanted = key_of(key)) m_index.erase(*wanted);
}

void PackStore::discard(const Found& found) {
  if (!found.pack) return;
  std::lock_guard<std::mutex> lock(m_mutex);
  const Pack& pack = m_packs[*found.pack];
  const int directory = directory_locked();
  if (directory >= 0 && !pack.name.empty()) {
    struct stat seen {};
    seen.st_dev = pack.device;
    seen.st_ino = pack.inode;
    remove_if_same(directory, pack.name, seen);
  }
  forget_packs_locked({*found.pack});
}

int PackStore::refresh_locked() {
  // One fstat tells both whether the directory is still safe and whether it changed.
  struct stat info {};
  if (!m_directory || ::fstat(m_directory.get(), &info) != 0 || !safe_directory(info)) return -1;
  const int directory = m_directory.get();
  const auto now = std::chrono::steady_clock::now();
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
    if (fd && ::fstat(fd.get(), &opened) == 0 && S_ISREG(opened.st_mode) &&
        opened.st_uid == ::geteuid()) {
      entries = read_pack_header(fd.get(), static_cast<std::uint64_t>(opened.st_size));
    }
    if (!entries) {
      // Not a pack clef wrote (a pack is renamed into place whole): a symlink, a FIFO, another
      // user's file, a damaged or planted one. Never read again.
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
  for (const auto& entry : entries) {
    const auto key = key_of(entry.key);
    if (!key) continue;
    const Location location{index, entry.offset, entry.length, entry.created,
                            check_value(entry.check)};
    const auto [at, fresh] = m_index.try_emplace(*key, location);
    // The newest entry answers (an expired one stored again, two writers at once).
    if (!fresh && at->second.created <= entry.created) at->second = location;
  }
}

void PackStore::forget_packs_locked(const std::vector<std::size_t>& packs) {
  if (packs.empty()) return;
  std::vector<bool> forgotten(m_packs.size(), false);
  for (std::size_t pack : packs) {
    if (pack >= m_packs.size() || m_packs[pack].name.empty()) continue;
    forgotten[pack] = true;
    m_pack_by_name.erase(m_packs[pack].name);
    m_packs[pack].name.clear();
  }
  for (auto it = m_index.begin(); it != m_index.end();) {
    it = forgotten[it->second.pack] ? m_index.erase(it) : std::next(it);
  }
}

PackWritten PackStore::add(std::string key, std::int64_t created, std::string text) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_pending_bytes += text.size();
  const auto [at, fresh] = m_pending_by_key.try_emplace(key, m_pending.size());
  if (fresh) {
    m_pending.push_back({std::move(key), created, std::move(text)});
  } else {
    m_pending[at->second] = {std::move(key), created, std::move(text)};
  }
  if (m_pending.size() >= pack_entries || m_pending_bytes >= m_pack_bytes ||
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
  m_pending_by_key.clear();
  m_pending_bytes = 0;
  m_last_pack = std::chrono::steady_clock::now();
  std::vector<PackEntry> where;
  const std::string text = pack_text(entries, where);
  int directory = directory_locked();
  std::string name;
  Fd fd;
  for (int attempt = 0; attempt < 8 && directory >= 0 && !fd; ++attempt) {
    name = random_name();
    const std::string temp = "." + name + ".tmp";
    fd = Fd(::openat(directory, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600));
    if (fd || errno == EEXIST) continue;
    // The directory was removed from under the store (clef cache clear does not; a person may):
    // made again, once.
    if (errno != ENOENT || m_reopened) return {};
    m_reopened = true;
    ::mkdirat(m_top, packs_directory, 0700);
    m_directory = open_shard(m_top, packs_directory);
    directory = directory_locked();
    m_pack_by_name.clear();
    m_index.clear();
    m_packs.clear();
  }
  if (!fd) return {};
  const std::string temp = "." + name + ".tmp";
  const std::string final_name = name + ".pack";
  struct stat info {};
  const bool written = write_all(fd.get(), text) && ::fstat(fd.get(), &info) == 0;
  const bool closed = ::close(fd.release()) == 0;
  // Never over another pack: a name drawn twice (one chance in 2^64) is not a reason to lose one.
  int renamed =
      ::renameat2(directory, temp.c_str(), directory, final_name.c_str(), RENAME_NOREPLACE);
  if (renamed != 0 && (errno == EINVAL || errno == ENOSYS))
    renamed = ::renameat(directory, temp.c_str(), directory, final_name.c_str());
  if (!written || !closed || renamed != 0) {
    ::unlinkat(directory, temp.c_str(), 0);
    return {};
  }
  add_pack_locked({final_name, info.st_dev, info.st_ino, text.size()}, where);
  constexpr std::uint64_t block = 4096;
  return {entries.size(), (text.size() + block - 1) / block * block};
}

}  // namespace clef::detail
