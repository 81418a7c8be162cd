// Internal: reading an attachment (image, audio, video) from a file with its size refused before
// reading, and the words clef's errors use to describe bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "clef/result.hpp"

namespace clef::detail {

/// The whole file; an oversize file is refused before it is read, naming `what` ("image").
/// Errors carry the path as `where`.
Result<std::string> read_attachment(const std::string& path, std::size_t max_bytes,
                                    std::string_view what);

/// `recognise(bytes)` on the file's bytes (Image::from_bytes, MediaClip::from_bytes), its error
/// naming the path.
template <typename Recognised, typename Recognise>
Result<Recognised> recognise_file(const std::string& path, std::size_t max_bytes,
                                  std::string_view what, Recognise recognise) {
  auto bytes = read_attachment(path, max_bytes, what);
  if (!bytes) return bytes.error();
  Result<Recognised> recognised = recognise(std::move(bytes).value());
  if (!recognised) {
    Error error = recognised.error();
    error.where = path;
    return error;
  }
  return recognised;
}

/// "12.0 MiB".
std::string mib_text(std::size_t bytes);

/// "image is 20971521 bytes, over the 20971520-byte (20.0 MiB) limit": exact, so a size just
/// over a limit never reads as the limit itself.
std::string over_limit_text(std::string_view what, std::size_t bytes, std::size_t max_bytes);

/// What a file that is not the kind asked for is, for "not a … file" messages: "it is a GIF
/// image" when its first bytes are a format's signature (or "it is text"), else "its first
/// bytes match none of their signatures". Never the bytes themselves: a dataset may name any
/// file on the machine, and its error lands in the output.
std::string what_the_bytes_are(std::string_view bytes);

}  // namespace clef::detail
