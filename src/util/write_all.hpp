// Internal: writing a whole buffer to a file descriptor, across short writes and EINTR.
#pragma once

#include <string_view>

namespace clef::detail {

/// Writes all of `bytes` to `fd`; false (errno set) when a write fails or writes nothing.
bool write_all(int fd, std::string_view bytes);

}  // namespace clef::detail
