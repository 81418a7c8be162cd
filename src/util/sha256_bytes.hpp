// Internal: SHA-256 as raw bytes, for keys held in memory (batch dedupe); clef/digest.hpp has the
// public hex form. OpenSSL's libcrypto, already on every machine with libcurl's OpenSSL build.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

namespace clef::detail {

using Sha256 = std::array<unsigned char, 32>;

Sha256 sha256(std::string_view bytes);
/// The digest of `parts` one after another, as of their concatenation.
Sha256 sha256(std::initializer_list<std::string_view> parts);

/// Lower-case hex of a digest.
std::string to_hex(const Sha256& digest);

/// A digest is already uniformly distributed: its first bytes are a fine hash.
struct Sha256Hash {
  std::size_t operator()(const Sha256& digest) const noexcept {
    std::size_t value = 0;
    std::memcpy(&value, digest.data(), sizeof value);
    return value;
  }
};

}  // namespace clef::detail
