// The implementation of file_bytes.hpp.
#include "media/file_bytes.hpp"

#include <algorithm>
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

std::string what_the_bytes_are(std::string_view bytes) {
  struct Signature {
    std::string_view start;
    const char* name;
  };
  static constexpr Signature signatures[] = {
      {std::string_view("\x89PNG\r\n\x1a\n", 8), "a PNG image"},
      {std::string_view("\xFF\xD8\xFF", 3), "a JPEG image"},
      {"GIF87a", "a GIF image"},
      {"GIF89a", "a GIF image"},
      {std::string_view("II*\0", 4), "a TIFF image"},
      {std::string_view("MM\0*", 4), "a TIFF image"},
      {"%PDF-", "a PDF document"},
      {std::string_view("PK\x03\x04", 4), "a ZIP archive"},
      {std::string_view("\x1F\x8B", 2), "a gzip file"},
      {"\177ELF", "a program (ELF)"},
      {"RIFF", "a RIFF file"},
      {"ID3", "an MP3 file"},
      {"fLaC", "a FLAC file"},
      {"OggS", "an Ogg file"},
      {std::string_view("\x1A\x45\xDF\xA3", 4), "a WebM or Matroska file"},
  };
  if (bytes.size() >= 12 && bytes.substr(4, 4) == "ftyp")
    return "it is an ISO media file (MP4, HEIF, AVIF)";
  if (bytes.size() >= 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WAVE")
    return "it is WAV audio";
  // A BMP's reserved words are zero: "BM" alone starts too much text.
  if (bytes.size() >= 14 && bytes.substr(0, 2) == "BM" &&
      bytes.substr(6, 4) == std::string_view("\0\0\0\0", 4))
    return "it is a BMP image";
  for (const auto& signature : signatures) {
    if (bytes.substr(0, signature.start.size()) == signature.start)
      return std::string("it is ") + signature.name;
  }
  const std::string_view head = bytes.substr(0, 512);
  const bool text = std::all_of(head.begin(), head.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x20 || byte == '\n' || byte == '\r' || byte == '\t';
  });
  return text ? "it is text" : "its first bytes match none of their signatures";
}

}  // namespace clef::detail
