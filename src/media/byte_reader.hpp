// Internal: bounds-checked reads of big- and little-endian integers from untrusted bytes. Every
// read past the end yields nullopt, so a container parser cannot run off a truncated file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace clef::detail {

/// Bytes [at, at + count) of `bytes`, or nullopt when they are not all there.
inline std::optional<std::string_view> bytes_at(std::string_view bytes, std::size_t at,
                                                std::size_t count) {
  if (at > bytes.size() || count > bytes.size() - at) return std::nullopt;
  return bytes.substr(at, count);
}

/// An unsigned big-endian integer of `width` bytes (1..8) at `at`.
inline std::optional<std::uint64_t> big_endian(std::string_view bytes, std::size_t at,
                                               std::size_t width) {
  const auto field = bytes_at(bytes, at, width);
  if (!field || width == 0 || width > 8) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : *field) value = value << 8 | static_cast<unsigned char>(c);
  return value;
}

/// An unsigned little-endian integer of `width` bytes (1..8) at `at`.
inline std::optional<std::uint64_t> little_endian(std::string_view bytes, std::size_t at,
                                                  std::size_t width) {
  const auto field = bytes_at(bytes, at, width);
  if (!field || width == 0 || width > 8) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = width; i-- > 0;)
    value = value << 8 | static_cast<unsigned char>((*field)[i]);
  return value;
}

/// True when `bytes` holds `tag` at `at`.
inline bool has_tag(std::string_view bytes, std::size_t at, std::string_view tag) {
  const auto field = bytes_at(bytes, at, tag.size());
  return field && *field == tag;
}

}  // namespace clef::detail
