// libFuzzer: a cache pack's header read from hostile bytes (src/store/pack_format.hpp) — a pack
// planted or damaged in the cache directory is read by its header before a byte it points at.
// Oracles beyond "no crash": every entry the header lists lies within the file and after the
// header, is at most 64 MiB and can be read; its key reads back as the same 64 hex digits.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "store/cache_directory.hpp"
#include "store/pack_format.hpp"
#include "util/write_all.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = ::memfd_create("pack", MFD_CLOEXEC);
  if (fd < 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (clef::detail::write_all(fd, bytes) || size == 0) {
    if (const auto entries = clef::detail::read_pack_header(fd, size)) {
      for (const auto& entry : *entries) {
        if (entry.length == 0 || entry.length > clef::detail::max_cache_entry_bytes ||
            entry.offset > size || entry.length > size - entry.offset) {
          __builtin_trap();
        }
        if (!clef::detail::read_pack_bytes(fd, entry.offset, entry.length)) __builtin_trap();
        const std::string hex = clef::detail::key_hex(entry.key);
        const auto again = clef::detail::pack_key(hex);
        if (hex.size() != 64 || !again || *again != entry.key) __builtin_trap();
      }
    }
  }
  ::close(fd);
  return 0;
}
