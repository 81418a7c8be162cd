// Internal: standard base64 (RFC 4648, with padding).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "clef/export.hpp"

namespace clef::detail {

std::string base64_encode(std::string_view bytes);

/// The bytes of strict standard base64: padded to a multiple of 4, only the alphabet, no white
/// space; nullopt for anything else. Exported from libclef.so (CLEF_API) for clef_mock, which
/// decodes TypeSafe's assets.
CLEF_API std::optional<std::string> base64_decode(std::string_view text);

}  // namespace clef::detail
