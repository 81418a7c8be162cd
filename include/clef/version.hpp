// clef: the library's version.
#pragma once

#include <string>

#include "clef/export.hpp"

namespace clef {

/// The library version, "MAJOR.MINOR.PATCH".
inline constexpr const char* version = "0.1.0";

/// The transport this process runs on: "libcurl 7.88.1, TLS: OpenSSL/3.0.15" — the libcurl
/// loaded at run time and the TLS library it was built with (clef --version prints it).
CLEF_API std::string transport_version();

}  // namespace clef
