// clef::read_line: one line of a line-oriented input with bounded memory (see clef/json.hpp).
#include <istream>
#include <string>

#include "clef/json.hpp"

namespace clef {

bool read_line(std::istream& in, Line& line, std::size_t max_bytes) {
  line.text.clear();
  line.too_long = false;
  line.has_newline = false;
  // Byte by byte from the stream buffer: std::getline would hold a line of any length.
  std::streambuf* buffer = in.rdbuf();
  bool any = false;
  for (int c = buffer->sbumpc(); c != std::char_traits<char>::eof(); c = buffer->sbumpc()) {
    any = true;
    if (c == '\n') {
      line.has_newline = true;
      return true;
    }
    if (line.text.size() < max_bytes)
      line.text += static_cast<char>(c);
    else
      line.too_long = true;
  }
  if (!any) in.setstate(std::ios::eofbit);
  return any;
}

}  // namespace clef
