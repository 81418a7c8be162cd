// Internal: standard base64 (RFC 4648, with padding).
#pragma once

#include <string>
#include <string_view>

namespace clef::detail {

std::string base64_encode(std::string_view bytes);

}  // namespace clef::detail
