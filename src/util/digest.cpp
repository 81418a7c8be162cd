// SHA-256 over OpenSSL: clef/digest.hpp's hex forms and sha256_bytes.hpp's raw digest.
#include "util/sha256_bytes.hpp"

#include "clef/digest.hpp"

#include <openssl/evp.h>

#include <new>
#include <string>

namespace clef::detail {
namespace {

/// SHA-256, fetched from OpenSSL's providers once: EVP_sha256() is fetched again by every
/// EVP_DigestInit_ex (a lock and a lookup, 1.4% of a cached batch's CPU).
const EVP_MD* sha256_method() {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
  static const EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (fetched) return fetched;
#endif
  return EVP_sha256();
}

}  // namespace

Sha256 sha256(std::initializer_list<std::string_view> parts) {
  // One context per thread, begun again for each digest: a context made and freed per digest
  // (EVP_Digest makes one too) was half the cost of a cache key.
  struct Context {
    EVP_MD_CTX* context = EVP_MD_CTX_new();
    ~Context() { EVP_MD_CTX_free(context); }
  };
  thread_local Context reused;
  EVP_MD_CTX* context = reused.context;
  if (!context || EVP_DigestInit_ex(context, sha256_method(), nullptr) != 1) throw std::bad_alloc();
  for (std::string_view part : parts) EVP_DigestUpdate(context, part.data(), part.size());
  Sha256 digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context, digest.data(), &length) != 1) throw std::bad_alloc();
  return digest;
}

Sha256 sha256(std::string_view bytes) {
  return sha256({bytes});
}

std::string to_hex(const Sha256& digest) {
  static const char* digits = "0123456789abcdef";
  std::string out(digest.size() * 2, '0');
  for (std::size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = digits[digest[i] >> 4];
    out[2 * i + 1] = digits[digest[i] & 0x0f];
  }
  return out;
}

}  // namespace clef::detail

namespace clef {

std::string sha256_hex(std::string_view bytes) {
  return detail::to_hex(detail::sha256(bytes));
}

Sha256Hasher::Sha256Hasher() : m_context(EVP_MD_CTX_new()) {
  if (!m_context ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(m_context), detail::sha256_method(), nullptr) != 1)
    throw std::bad_alloc();
}

Sha256Hasher::~Sha256Hasher() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(m_context));
}

void Sha256Hasher::update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(m_context), bytes.data(), bytes.size());
}

std::string Sha256Hasher::hex() const {
  // Finishing consumes a context, so finish a copy and keep this one open.
  EVP_MD_CTX* copy = EVP_MD_CTX_new();
  detail::Sha256 digest{};
  unsigned int length = 0;
  const bool done = copy && EVP_MD_CTX_copy_ex(copy, static_cast<EVP_MD_CTX*>(m_context)) == 1 &&
                    EVP_DigestFinal_ex(copy, digest.data(), &length) == 1;
  EVP_MD_CTX_free(copy);
  if (!done) throw std::bad_alloc();
  return detail::to_hex(digest);
}

}  // namespace clef
