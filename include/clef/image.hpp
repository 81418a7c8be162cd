// clef: images for vision models, recognised by their bytes, never by file name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "clef/export.hpp"
#include "clef/result.hpp"

namespace clef {

enum class ImageFormat { png, jpeg, webp };

/// "image/png", "image/jpeg" or "image/webp".
CLEF_API const char* mime_type(ImageFormat format) noexcept;

/// Pixels across and down, as the image's header states them.
struct ImageSize {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

/// An image attached to a request, shared by all its questions.
///
///     auto image = clef::Image::from_file("receipt.png");
///     if (!image) return 1;  // image.error().where names the file
///     request.images.push_back(std::move(image).value());
class CLEF_API Image {
 public:
  /// 20 MiB: above Workers AI's 4 MiB per image and within Ollama's 32 MiB body.
  static constexpr std::size_t default_max_bytes = 20u * 1024u * 1024u;

  /// Recognises PNG, JPEG or WebP from the first bytes; anything else is invalid_input.
  static Result<Image> from_bytes(std::string bytes, std::size_t max_bytes = default_max_bytes);
  /// Reads and recognises a file; the error names the path.
  static Result<Image> from_file(const std::string& path,
                                 std::size_t max_bytes = default_max_bytes);

  ImageFormat format() const noexcept { return m_format; }
  const std::string& bytes() const noexcept { return m_bytes; }
  /// The size the header states; nullopt when the header is cut short (such an image is still
  /// sent: the server judges it).
  std::optional<ImageSize> size() const noexcept { return m_size; }
  /// Standard base64 of the bytes, no prefix (what Ollama takes).
  std::string base64() const;
  /// "data:image/png;base64,..." (what Workers AI and llama.cpp take).
  std::string data_url() const;

 private:
  Image(ImageFormat format, std::string bytes, std::optional<ImageSize> size)
      : m_format(format), m_bytes(std::move(bytes)), m_size(size) {}
  ImageFormat m_format;
  std::string m_bytes;
  std::optional<ImageSize> m_size;
};

/// The format of `bytes` from their magic number, or invalid_input saying what was found.
CLEF_API Result<ImageFormat> sniff_image_format(std::string_view bytes);

}  // namespace clef
