// The implementation of clef/image.hpp: images for vision models, recognised by their bytes, never
// by file name.
#include "clef/image.hpp"

#include "media/file_bytes.hpp"
#include "media/image_size.hpp"
#include "util/base64.hpp"

namespace clef {

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
                    "not a PNG, JPEG or WebP image: " + detail::what_the_bytes_are(bytes));
}

Result<Image> Image::from_bytes(std::string bytes, std::size_t max_bytes) {
  if (bytes.size() > max_bytes) {
    return make_error(ErrorKind::invalid_input,
                      detail::over_limit_text("image", bytes.size(), max_bytes));
  }
  auto format = sniff_image_format(bytes);
  if (!format) return format.error();
  const auto size = detail::image_size(bytes, format.value());
  return Image(format.value(), std::move(bytes), size);
}

Result<Image> Image::from_file(const std::string& path, std::size_t max_bytes) {
  return detail::recognise_file<Image>(path, max_bytes, "image", [&](std::string bytes) {
    return from_bytes(std::move(bytes), max_bytes);
  });
}

std::string Image::base64() const {
  return detail::base64_encode(m_bytes);
}

std::string Image::data_url() const {
  return std::string("data:") + mime_type(m_format) + ";base64," + base64();
}

}  // namespace clef
