// clef: SHA-256, the one digest clef uses for keys (batch dedupe, run records).
#pragma once

#include <string>
#include <string_view>

#include "clef/export.hpp"

namespace clef {

/// Lower-case hex SHA-256 of `bytes` (OpenSSL's libcrypto).
///
///     std::string hex = clef::sha256_hex("abc");
///     // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
CLEF_API std::string sha256_hex(std::string_view bytes);

/// SHA-256 of bytes given in pieces, for input too large to hold at once (a dataset file).
///
///     clef::Sha256Hasher hasher;
///     hasher.update("a");
///     hasher.update("bc");
///     std::string hex = hasher.hex();  // the same as clef::sha256_hex("abc")
class CLEF_API Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;
  void update(std::string_view bytes);
  /// The digest of everything given so far; update() may go on after it.
  std::string hex() const;

 private:
  void* m_context;  ///< OpenSSL's EVP_MD_CTX, kept out of this header.
};

}  // namespace clef
