// The implementation of write_all.hpp: writing a whole buffer to a file descriptor, across short
// writes and EINTR.
#include "util/write_all.hpp"

#include <unistd.h>

#include <cerrno>

namespace clef::detail {

bool write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace clef::detail
