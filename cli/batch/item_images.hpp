// Each batch item's own images (--image-field): the paths a line names, read as the item is.
#pragma once

#include <string>
#include <vector>

#include "clef/image.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// The images `field` names: one path, or a JSON array of paths; "" for none. A relative path
/// is read from `base_directory` (the input file's, so a data set and its images travel
/// together). The error names the path, for the item's output line.
Result<std::vector<Image>> item_images(const std::string& field, const std::string& base_directory);

/// A stand-in for an item's image where a run's request is checked before any item is read: a
/// 280 x 280 PNG's header (the smallest TypeSafe takes), referenced by the state "image_1".
Image stand_in_image();

/// The directory `input` is in ("." for a bare name or stdin's "-").
std::string directory_of(const std::string& input);

}  // namespace clef::cli
