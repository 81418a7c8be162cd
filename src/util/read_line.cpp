// clef::read_line: one line of a line-oriented input with bounded memory (see clef/json.hpp).
#include <cstdint>
#include <istream>
#include <string>

#include "clef/json.hpp"

namespace clef {

bool read_line(std::istream& in, Line& line, std::size_t max_bytes) {
  line.text.clear();
  line.too_long = false;
  line.has_newline = false;
  // Byte by byte from the stream buffer: std::getline would hold a line of any length. The
  // buffer is called directly, so nothing of the stream's own guards it: libstdc++'s file
  // buffer throws when read(2) fails (a directory: EISDIR; EIO). That becomes badbit, as a
  // stream's own functions would set it, and the caller's in.bad() says the input broke off.
  std::streambuf* buffer = in.rdbuf();
  if (!buffer) {
    in.setstate(std::ios::badbit);
    return false;
  }
  // Past the kept part, a line is read through to its end, but not for ever: an input that
  // never ends its line (/dev/zero, a file of one endless line) stops the reading.
  const std::size_t most_read_past = max_bytes > SIZE_MAX / 8 ? SIZE_MAX : max_bytes * 8;
  std::size_t length = 0;
  bool any = false;
  try {
    for (int c = buffer->sbumpc(); c != std::char_traits<char>::eof(); c = buffer->sbumpc()) {
      any = true;
      if (c == '\n') {
        line.has_newline = true;
        return true;
      }
      if (line.text.size() < max_bytes) {
        line.text += static_cast<char>(c);
      } else {
        line.too_long = true;
        if (++length > most_read_past) {
          in.setstate(std::ios::badbit);
          return false;
        }
      }
    }
  } catch (...) {
    in.setstate(std::ios::badbit);
    return false;
  }
  if (!any) in.setstate(std::ios::eofbit);
  return any;
}

}  // namespace clef
