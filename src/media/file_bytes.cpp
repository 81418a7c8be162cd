// The implementation of file_bytes.hpp.
#include "media/file_bytes.hpp"

#include <cstdio>
#include <fstream>

namespace clef::detail {

Result<std::string> read_attachment(const std::string& path, std::size_t max_bytes,
                                    std::string_view what) {
  const std::string name(what);
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return make_error(ErrorKind::invalid_input, "cannot open " + name + " file", path);
  const auto size = static_cast<std::size_t>(file.tellg());
  if (size > max_bytes) {
    // Refuse before reading: an oversize file is never loaded into memory.
    return make_error(
        ErrorKind::invalid_input,
        name + " is " + mib_text(size) + ", over the " + mib_text(max_bytes) + " limit", path);
  }
  file.seekg(0);
  std::string bytes(size, '\0');
  if (!file.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return make_error(ErrorKind::invalid_input, "cannot read " + name + " file", path);
  }
  return bytes;
}

std::string mib_text(std::size_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buffer;
}

std::string first_bytes_hex(std::string_view bytes) {
  std::string out;
  char buffer[4];
  for (std::size_t i = 0; i < bytes.size() && i < 8; ++i) {
    std::snprintf(buffer, sizeof buffer, "%02X ", static_cast<unsigned char>(bytes[i]));
    out += buffer;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace clef::detail
