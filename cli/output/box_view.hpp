// How a box answer is shown to people: where it is, in fractions and (when the image's size is
// known) pixels, and drawn on a small frame of the image.
#pragma once

#include <optional>
#include <ostream>

#include "clef/decision.hpp"
#include "clef/image.hpp"

namespace clef::cli {

/// The lines under a box answer's name: its edges, then the frame with the box in it. `image`
/// is the size of the one image the box is in (nullopt when unknown or there were several).
void print_box(std::ostream& out, const BoxAnswer& box, std::optional<ImageSize> image, bool color);

}  // namespace clef::cli
