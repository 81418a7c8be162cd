// The implementation of pack_format.hpp: a pack's header read and checked, a pack's bytes made.
#include "store/pack_format.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include "store/cache_directory.hpp"
#include "util/sha256_bytes.hpp"

namespace clef::detail {
namespace {

constexpr std::string_view pack_magic = "clef-cache-pack 1 ";
/// A header listing more is not one clef wrote.
constexpr std::uint64_t most_listed = 4096;
/// The longest line of a header: a key, three numbers of up to 20 characters, a check, their
/// separators.
constexpr std::uint64_t longest_header_line = 64 + 3 * 21 + 17 + 1;

/// Each byte's value as a lowercase hex digit, or 16 when it is not one.
constexpr std::array<std::uint8_t, 256> hex_digits = [] {
  std::array<std::uint8_t, 256> table{};
  for (auto& value : table) value = 16;
  for (int c = '0'; c <= '9'; ++c)
    table[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c)
    table[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
  return table;
}();

/// The value of 16 lowercase hex digits at `hex`; nothing when one is not.
std::optional<std::uint64_t> hex_word(const char* hex) {
  std::uint64_t value = 0;
  std::uint8_t seen = 0;
  for (int i = 0; i < 16; ++i) {
    const std::uint8_t digit = hex_digits[static_cast<unsigned char>(hex[i])];
    seen |= digit;
    value = value << 4 | (digit & 15u);
  }
  return seen & 16u ? std::nullopt : std::optional<std::uint64_t>(value);
}

bool is_lower_hex(std::string_view text) {
  for (char c : text) {
    if (hex_digits[static_cast<unsigned char>(c)] == 16) return false;
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

/// "KEY OFFSET LENGTH CREATED CHECK", each as pack_text writes it; the offset still from the
/// header's end.
std::optional<PackEntry> read_header_line(std::string_view line) {
  const auto key_text = next_field(line, ' ');
  const auto offset = next_field(line, ' ');
  const auto length = next_field(line, ' ');
  const auto key = key_text ? pack_key(*key_text) : std::nullopt;
  if (!key || !offset || !length) return std::nullopt;
  PackEntry entry;
  entry.key = *key;
  const auto offset_value = read_whole(*offset);
  const auto length_value = read_whole(*length);
  const auto created_text = next_field(line, ' ');
  const auto created = created_text ? read_signed(*created_text) : std::nullopt;
  const auto check = line.size() == 16 ? hex_word(line.data()) : std::nullopt;
  if (!offset_value || !length_value || !created || !check) return std::nullopt;
  entry.check = *check;
  entry.offset = *offset_value;
  entry.length = *length_value;
  entry.created = *created;
  if (entry.length == 0 || entry.length > max_cache_entry_bytes) return std::nullopt;
  return entry;
}

}  // namespace

std::optional<std::string> read_pack_bytes(int fd, std::uint64_t offset, std::uint64_t bytes) {
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

bool is_pack_name(const std::string& name) {
  return name.size() == 16 + 5 && name.compare(16, 5, ".pack") == 0 &&
         is_lower_hex(std::string_view(name).substr(0, 16));
}

bool is_pack_temp_name(const std::string& name) {
  return name.size() == 1 + 16 + 4 && name[0] == '.' && name.compare(17, 4, ".tmp") == 0 &&
         is_lower_hex(std::string_view(name).substr(1, 16));
}

bool is_other_pack_version(int fd) {
  constexpr std::string_view family = "clef-cache-pack ";
  const auto first = read_pack_bytes(fd, 0, family.size() + 12);
  if (!first || first->compare(0, family.size(), family) != 0) return false;
  std::string_view version = std::string_view(*first).substr(family.size());
  version = version.substr(0, version.find(' '));
  return version.size() < 12 && read_whole(version) && version != "1";
}

std::optional<std::vector<PackEntry>> read_pack_header(int fd, std::uint64_t size) {
  const auto first = read_pack_bytes(fd, 0, std::min<std::uint64_t>(size, pack_magic.size() + 6));
  if (!first || first->compare(0, pack_magic.size(), pack_magic) != 0) return std::nullopt;
  std::string_view count_line = std::string_view(*first).substr(pack_magic.size());
  const auto count_text = next_field(count_line, '\n');
  const auto count = count_text ? read_whole(*count_text) : std::nullopt;
  // Written as clef writes it (no leading zero): the header's size follows from it.
  if (!count || *count == 0 || *count > most_listed || std::to_string(*count) != *count_text)
    return std::nullopt;
  const std::uint64_t first_line = pack_magic.size() + count_text->size() + 1;
  const auto header = read_pack_bytes(
      fd, 0, std::min<std::uint64_t>(size, first_line + *count * longest_header_line));
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

std::optional<PackKey> pack_key(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  PackKey key{};
  for (std::size_t word = 0; word < 4; ++word) {
    const auto value = hex_word(hex.data() + word * 16);
    if (!value) return std::nullopt;
    key[word] = *value;
  }
  return key;
}

namespace {

/// `value` as 16 lowercase hex digits, appended: what hex_word reads back.
void append_hex_word(std::string& out, std::uint64_t value) {
  static constexpr char digits[] = "0123456789abcdef";
  for (int shift = 60; shift >= 0; shift -= 4) out += digits[(value >> shift) & 0xf];
}

}  // namespace

PackKey pack_key(const Sha256& digest) {
  PackKey key{};
  for (std::size_t i = 0; i < digest.size(); ++i) key[i / 8] = key[i / 8] << 8 | digest[i];
  return key;
}

void append_key_hex(std::string& out, const PackKey& key) {
  // A byte's two digits from a table: a digit at a time was most of writing a key.
  static constexpr auto byte_digits = [] {
    constexpr char digits[] = "0123456789abcdef";
    std::array<std::array<char, 2>, 256> table{};
    for (std::size_t byte = 0; byte < 256; ++byte)
      table[byte] = {digits[byte >> 4], digits[byte & 15]};
    return table;
  }();
  char hex[64];
  for (std::size_t i = 0; i < 32; ++i) {
    const auto byte = static_cast<std::size_t>(key[i / 8] >> (56 - 8 * (i % 8)) & 0xff);
    std::memcpy(hex + 2 * i, byte_digits[byte].data(), 2);
  }
  out.append(hex, sizeof hex);
}

std::string key_hex(const PackKey& key) {
  std::string text;
  text.reserve(64);
  append_key_hex(text, key);
  return text;
}

std::uint64_t entry_check(std::string_view text) {
  const Sha256 digest = sha256(text);
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value = value << 8 | digest[i];
  return value;
}

std::string pack_text(const std::vector<PendingEntry>& entries, std::vector<PackEntry>& where) {
  std::string text(pack_magic);
  text.reserve(pack_magic.size() + 24 + entries.size() * 128);
  append_decimal(text, entries.size());
  text += '\n';
  where.clear();
  std::uint64_t offset = 0;  // from the end of the header, until the header is written
  std::size_t body_size = 0;
  for (const auto& entry : entries) {
    where.push_back({entry.key, offset, entry.text.size(), entry.created, entry.check});
    append_key_hex(text, entry.key);
    text += ' ';
    append_decimal(text, offset);
    text += ' ';
    append_decimal(text, entry.text.size());
    text += ' ';
    append_decimal(text, entry.created);  // signed, as written before
    text += ' ';
    append_hex_word(text, entry.check);
    text += '\n';
    offset += entry.text.size() + 1;
    body_size += entry.text.size() + 1;
  }
  for (auto& entry : where) entry.offset += text.size();
  // The entries after the header, copied once.
  text.reserve(text.size() + body_size);
  for (const auto& entry : entries) {
    text += entry.text;
    text += '\n';
  }
  return text;
}

}  // namespace clef::detail
