// Internal: the cache's pack format — a pack's header read and checked against its file, a
// pack's bytes made — and the names a pack and its temporary file have. PackStore
// (cache_packs.hpp) keeps and finds entries in packs; the cache's scan counts and removes them.
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

#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/sha256_bytes.hpp"

namespace clef::detail {

/// The cache's subdirectory that holds its packs.
inline constexpr const char* packs_directory = "packs";

/// "<16 hex>.pack", as PackStore names its packs.
bool is_pack_name(const std::string& name);
/// ".<16 hex>.tmp", the temporary file a pack is written to before it is renamed.
bool is_pack_temp_name(const std::string& name);

/// An entry's key (64 hex digits) as four words: an index of a full cache holds half a million.
using PackKey = std::array<std::uint64_t, 4>;

/// `hex` as a key; nothing when it is not 64 lowercase hex digits.
std::optional<PackKey> pack_key(std::string_view hex);
/// A SHA-256 as a key: the words its hex digits spell (what pack_key reads from to_hex(digest)).
PackKey pack_key(const Sha256& digest);
/// `key` as its 64 hex digits.
std::string key_hex(const PackKey& key);
/// `key`'s 64 hex digits, appended to `out`.
void append_key_hex(std::string& out, const PackKey& key);

/// `value` in decimal, appended (std::to_string without a string of its own): the numbers of a
/// pack's header and of an entry's text.
template <typename Integer>
void append_decimal(std::string& out, Integer value) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

/// An entry as a pack's header lists it.
struct PackEntry {
  PackKey key{};
  std::uint64_t offset = 0;  ///< From the start of the file.
  std::uint64_t length = 0;
  std::int64_t created = 0;
  std::uint64_t check = 0;  ///< The first 16 hex digits of the entry's SHA-256, as a number.
};

/// The check a pack's header holds for an entry's text.
std::uint64_t entry_check(std::string_view text);

/// `bytes` bytes of the file open at `fd` from `offset`, or nothing when it is shorter.
std::optional<std::string> read_pack_bytes(int fd, std::uint64_t offset, std::uint64_t bytes);

/// True when the file open at `fd` is a pack of another version of the format than this one
/// (a later clef's, sharing the directory): not read, and not removed as damaged.
bool is_other_pack_version(int fd);

/// The entries the pack open at `fd` (`size` bytes) lists, each checked to lie within it; nothing
/// when it is not a pack clef wrote (damaged, planted, cut short).
std::optional<std::vector<PackEntry>> read_pack_header(int fd, std::uint64_t size);

/// An entry waiting to be written in the next pack.
struct PendingEntry {
  PackKey key{};
  std::int64_t created = 0;
  std::string text;
  /// entry_check(text), taken when the entry is kept: writing a pack then needs no digest (a
  /// pack written as the process exits runs after this thread's OpenSSL context is gone).
  std::uint64_t check = 0;
};

/// The bytes of a pack holding `entries`; `where` is set to where each lies in it.
std::string pack_text(const std::vector<PendingEntry>& entries, std::vector<PackEntry>& where);

}  // namespace clef::detail
