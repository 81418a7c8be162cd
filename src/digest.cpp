#include "digest.hpp"

#include "clef/digest.hpp"

#include <openssl/evp.h>

#include <string>

namespace clef::detail {

Sha256 sha256(std::string_view bytes) {
  Sha256 digest{};
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

std::string to_hex(const Sha256& digest) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (unsigned char byte : digest) {
    out += digits[byte >> 4];
    out += digits[byte & 0x0f];
  }
  return out;
}

}  // namespace clef::detail

namespace clef {

std::string sha256_hex(std::string_view bytes) {
  return detail::to_hex(detail::sha256(bytes));
}

}  // namespace clef
