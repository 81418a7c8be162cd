// clef: the library's version.
#pragma once

namespace clef {

/// The library version, "MAJOR.MINOR.PATCH".
inline constexpr const char* version = "0.1.0";

}  // namespace clef
