// Internal: eight bytes of text compared at once, in a 64-bit word (SWAR): where a scan of JSON
// text looks for a few bytes among many (escaping a string, looking for a media key), a byte at a
// time with a branch on each was most of its cost.
#pragma once

#include <cstdint>
#include <cstring>

namespace clef::detail {

inline constexpr std::uint64_t byte_ones = 0x0101010101010101u;
inline constexpr std::uint64_t byte_highs = 0x8080808080808080u;

/// The eight bytes at `at`, as a word (a byte's lane is the same in every word loaded this way,
/// whatever the machine's byte order).
inline std::uint64_t word_at(const void* at) {
  std::uint64_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

/// The high bit of each byte of `word` that is `byte`, and perhaps of bytes in higher lanes than
/// one that is (a borrow): never none where one is, and the lowest flagged is exact.
inline std::uint64_t bytes_equal(std::uint64_t word, unsigned char byte) {
  const std::uint64_t x = word ^ (byte_ones * byte);
  return (x - byte_ones) & ~x & byte_highs;
}

/// The same for each byte below `bound` (at most 0x80).
inline std::uint64_t bytes_below(std::uint64_t word, unsigned char bound) {
  return (word - byte_ones * bound) & ~word & byte_highs;
}

/// The high bit of each byte of `word` that does not stand for itself in a JSON string (a quote,
/// a backslash, a control character, from 0x80: is_plain_string_byte's others), and perhaps of
/// bytes after one that is: the first flagged is exact.
inline std::uint64_t not_plain_string_bytes(std::uint64_t word) {
  return bytes_equal(word, '"') | bytes_equal(word, '\\') | bytes_below(word, 0x20) |
         (word & byte_highs);
}

}  // namespace clef::detail
