// The implementation of image_size.hpp: PNG's IHDR, JPEG's start-of-frame segment and WebP's
// VP8, VP8L or VP8X header.
#include "media/image_size.hpp"

#include "media/byte_reader.hpp"

namespace clef::detail {
namespace {

/// JPEG segments walked before giving up on finding a start of frame.
constexpr int max_jpeg_segments = 4096;

std::optional<ImageSize> sized(std::optional<std::uint64_t> width,
                               std::optional<std::uint64_t> height) {
  if (!width || !height || *width == 0 || *height == 0) return std::nullopt;
  return ImageSize{static_cast<std::uint32_t>(*width), static_cast<std::uint32_t>(*height)};
}

std::optional<ImageSize> png_size(std::string_view bytes) {
  if (!has_tag(bytes, 12, "IHDR")) return std::nullopt;
  return sized(big_endian(bytes, 16, 4), big_endian(bytes, 20, 4));
}

bool is_start_of_frame(std::uint64_t marker) {
  // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

std::optional<ImageSize> jpeg_size(std::string_view bytes) {
  std::size_t at = 2;
  for (int segment = 0; segment < max_jpeg_segments; ++segment) {
    if (big_endian(bytes, at, 1) != 0xFF) return std::nullopt;
    const auto marker = big_endian(bytes, at + 1, 1);
    if (!marker) return std::nullopt;
    if (*marker == 0xFF) {  // fill byte before a marker
      ++at;
      continue;
    }
    if (*marker == 0xD8 || *marker == 0x01 || (*marker >= 0xD0 && *marker <= 0xD7)) {
      at += 2;  // markers without a length
      continue;
    }
    if (*marker == 0xDA || *marker == 0xD9) return std::nullopt;  // image data before a frame
    // A length (2) and precision (1), then height and width.
    if (is_start_of_frame(*marker))
      return sized(big_endian(bytes, at + 7, 2), big_endian(bytes, at + 5, 2));
    const auto length = big_endian(bytes, at + 2, 2);
    if (!length || *length < 2) return std::nullopt;
    at += 2 + *length;
  }
  return std::nullopt;
}

std::optional<ImageSize> webp_size(std::string_view bytes) {
  if (has_tag(bytes, 12, "VP8 ")) {
    // A key frame: 3 bytes of frame tag, the start code 9D 01 2A, then 14-bit sizes.
    if (!has_tag(bytes, 23, "\x9D\x01\x2A")) return std::nullopt;
    const auto width = little_endian(bytes, 26, 2);
    const auto height = little_endian(bytes, 28, 2);
    if (!width || !height) return std::nullopt;
    return sized(*width & 0x3FFF, *height & 0x3FFF);
  }
  if (has_tag(bytes, 12, "VP8L")) {
    // The signature 0x2F, then 14 bits of width - 1 and 14 of height - 1, little-endian.
    const auto bits = little_endian(bytes, 21, 4);
    if (big_endian(bytes, 20, 1) != 0x2F || !bits) return std::nullopt;
    return sized((*bits & 0x3FFF) + 1, ((*bits >> 14) & 0x3FFF) + 1);
  }
  if (has_tag(bytes, 12, "VP8X")) {
    const auto width = little_endian(bytes, 24, 3);
    const auto height = little_endian(bytes, 27, 3);
    if (!width || !height) return std::nullopt;
    return sized(*width + 1, *height + 1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ImageSize> image_size(std::string_view bytes, ImageFormat format) {
  switch (format) {
    case ImageFormat::png:
      return png_size(bytes);
    case ImageFormat::jpeg:
      return jpeg_size(bytes);
    case ImageFormat::webp:
      return webp_size(bytes);
  }
  return std::nullopt;
}

}  // namespace clef::detail
