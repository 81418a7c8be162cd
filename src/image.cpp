// The implementation of clef/image.hpp: images for vision models, recognised by their bytes, never
// by file name.
#include "clef/image.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "base64.hpp"

namespace clef {
namespace {

std::string hex_prefix(std::string_view bytes) {
  std::string out;
  char buffer[4];
  for (std::size_t i = 0; i < bytes.size() && i < 8; ++i) {
    std::snprintf(buffer, sizeof buffer, "%02X ", static_cast<unsigned char>(bytes[i]));
    out += buffer;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

std::string mib(std::size_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buffer;
}

}  // namespace

const char* mime_type(ImageFormat format) noexcept {
  switch (format) {
    case ImageFormat::png:
      return "image/png";
    case ImageFormat::jpeg:
      return "image/jpeg";
    case ImageFormat::webp:
      return "image/webp";
  }
  return "application/octet-stream";
}

Result<ImageFormat> sniff_image_format(std::string_view bytes) {
  static constexpr std::string_view png("\x89PNG\r\n\x1a\n", 8);
  if (bytes.substr(0, 8) == png) return ImageFormat::png;
  if (bytes.size() >= 3 && bytes.substr(0, 3) == std::string_view("\xFF\xD8\xFF", 3)) {
    return ImageFormat::jpeg;
  }
  if (bytes.size() >= 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP") {
    return ImageFormat::webp;
  }
  if (bytes.empty()) return make_error(ErrorKind::invalid_input, "image is empty");
  return make_error(ErrorKind::invalid_input,
                    "not a PNG, JPEG or WebP image (first bytes: " + hex_prefix(bytes) + ")");
}

Result<Image> Image::from_bytes(std::string bytes, std::size_t max_bytes) {
  if (bytes.size() > max_bytes) {
    return make_error(ErrorKind::invalid_input,
                      "image is " + mib(bytes.size()) + ", over the " + mib(max_bytes) + " limit");
  }
  auto format = sniff_image_format(bytes);
  if (!format) return format.error();
  return Image(format.value(), std::move(bytes));
}

Result<Image> Image::from_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return make_error(ErrorKind::invalid_input, "cannot open image file", path);
  const auto size = static_cast<std::size_t>(file.tellg());
  if (size > max_bytes) {
    // Refuse before reading: an oversize file is never loaded into memory.
    return make_error(ErrorKind::invalid_input,
                      "image is " + mib(size) + ", over the " + mib(max_bytes) + " limit", path);
  }
  file.seekg(0);
  std::string bytes(size, '\0');
  if (!file.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return make_error(ErrorKind::invalid_input, "cannot read image file", path);
  }
  auto image = from_bytes(std::move(bytes), max_bytes);
  if (!image) {
    Error error = image.error();
    error.where = path;
    return error;
  }
  return image;
}

std::string Image::base64() const {
  return detail::base64_encode(m_bytes);
}

std::string Image::data_url() const {
  return std::string("data:") + mime_type(m_format) + ";base64," + base64();
}

}  // namespace clef
