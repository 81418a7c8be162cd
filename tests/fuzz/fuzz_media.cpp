// libFuzzer: recognising audio, video and image files from hostile bytes — the container probes
// (WAV, FLAC, MP3, AAC, Ogg, ISO/MP4, EBML/WebM) and image headers (PNG, JPEG, WebP).
// Oracles beyond "no crash": a length, when one is read, is finite and not negative; a clip keeps
// its bytes and a lower-case media type of its kind; an image's size, when read, is non-zero.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "clef/image.hpp"
#include "clef/media.hpp"
#include "media/media_probe.hpp"

namespace {

bool lower_case_type_of(const std::string& type, const char* kind) {
  if (type.rfind(std::string(kind) + "/", 0) != 0) return false;
  for (const char c : type) {
    if (c >= 'A' && c <= 'Z') return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (const auto facts = clef::detail::probe_media(bytes)) {
    if (facts->seconds && (!std::isfinite(*facts->seconds) || *facts->seconds < 0)) {
      __builtin_trap();
    }
  }
  for (const auto kind : {clef::MediaKind::audio, clef::MediaKind::video}) {
    const auto clip = clef::MediaClip::from_bytes(bytes, kind);
    if (!clip) continue;
    if (clip->bytes() != bytes) __builtin_trap();
    if (!lower_case_type_of(clip->media_type(), clef::to_string(kind))) __builtin_trap();
    if (clip->data_url().rfind("data:" + clip->media_type() + ";base64,", 0) != 0) __builtin_trap();
  }
  if (const auto image = clef::Image::from_bytes(bytes)) {
    const auto pixels = image->size();
    if (pixels && (pixels->width == 0 || pixels->height == 0)) __builtin_trap();
  }
  return 0;
}
