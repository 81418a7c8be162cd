// clef: SHA-256, the one digest clef uses for keys (batch dedupe, run records).
#pragma once

#include <string>
#include <string_view>

namespace clef {

/// Lower-case hex SHA-256 of `bytes` (OpenSSL's libcrypto).
///
///     std::string hex = clef::sha256_hex("abc");
///     // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
std::string sha256_hex(std::string_view bytes);

}  // namespace clef
