// The implementation of file_bytes.hpp.
#include "media/file_bytes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <sys/stat.h>

namespace clef::detail {

Result<std::string> read_attachment(const std::string& path, std::size_t max_bytes,
                                    std::string_view what) {
  const std::string name(what);
  // A directory, a pipe or a device has no size to check first (and a FIFO would block).
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    // Why, as the OS says it: missing, a loop of links, not allowed.
    return make_error(ErrorKind::invalid_input,
                      "cannot open " + name + " file: " + std::strerror(errno), path);
  }
  if (!S_ISREG(status.st_mode)) {
    return make_error(ErrorKind::invalid_input,
                      name + " is not a regular file (a directory, pipe or device): give a file",
                      path);
  }
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) {
    return make_error(ErrorKind::invalid_input,
                      "cannot open " + name + " file: " + std::strerror(errno), path);
  }
  const auto size = static_cast<std::size_t>(file.tellg());
  if (size > max_bytes) {
    // Refuse before reading: an oversize file is never loaded into memory.
    return make_error(ErrorKind::invalid_input, over_limit_text(name, size, max_bytes), path);
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

std::string over_limit_text(std::string_view what, std::size_t bytes, std::size_t max_bytes) {
  return std::string(what) + " is " + std::to_string(bytes) + " bytes, over the " +
         std::to_string(max_bytes) + "-byte (" + mib_text(max_bytes) + ") limit";
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
