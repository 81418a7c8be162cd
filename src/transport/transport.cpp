// The implementation of clef/transport.hpp: the HTTP seam.
#include "clef/transport.hpp"

namespace clef {

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

}  // namespace clef
