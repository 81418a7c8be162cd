// Internal: the path of a URL, for the 404 hints and the cassette's keys.
#pragma once

#include <string_view>

namespace clef::detail {

/// The path of `url` from its first '/' after the authority ("/v1/systemone"), or "" when it has
/// none ("http://host:11434").
inline std::string_view url_path(std::string_view url) {
  const auto scheme = url.find("://");
  const auto path = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return path == std::string_view::npos ? std::string_view() : url.substr(path);
}

}  // namespace clef::detail
