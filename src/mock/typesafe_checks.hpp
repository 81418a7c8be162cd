// Internal: TypeSafe's Danger Zone as the mock imitates it — images in an `assets` map and the
// Box question of Jev 1.14, behind the TypeSafe-Danger-Zone-Images header.
#pragma once

#include <optional>
#include <string>

#include "mock/checks.hpp"
#include "mock/reply.hpp"

namespace clef::mock_detail {

/// Whether `model` is a Jev 1.14 name, the first to answer box questions ("jev-1.14.0",
/// "jev-preview"); "jev-latest" is still 1.13.
bool answers_boxes(const std::string& model);

/// TypeSafe's first refusal of the body's assets and box questions, or nullopt: without the
/// header; a box on a model before 1.14; a box with no image; an asset of another shape, not
/// PNG or JPEG, over 16 MiB, outside 280 to 1568 pixels a side, or named nowhere in the state,
/// instructions or criteria.
std::optional<Reply> typesafe_refusal(const MockRequest& request, const Json& body,
                                      const std::string& model);

}  // namespace clef::mock_detail
