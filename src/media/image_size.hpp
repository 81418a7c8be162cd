// Internal: an image's width and height from its header, without decoding it.
#pragma once

#include <optional>
#include <string_view>

#include "clef/image.hpp"

namespace clef::detail {

/// The size the header states, or nullopt when the header is cut short or malformed.
std::optional<ImageSize> image_size(std::string_view bytes, ImageFormat format);

}  // namespace clef::detail
