// The implementation of media_probe.hpp's dispatch and its two simplest containers, WAV and FLAC,
// whose lengths sit at fixed places.
#include "media/media_probe.hpp"

#include <algorithm>

#include "media/byte_reader.hpp"

namespace clef::detail {
namespace {

/// RIFF chunks read before giving up on finding "data": a real WAV has a handful.
constexpr int max_wav_chunks = 1024;

}  // namespace

const char* container_name(Container container) noexcept {
  switch (container) {
    case Container::wav:
      return "WAV";
    case Container::mp3:
      return "MP3";
    case Container::aac:
      return "AAC";
    case Container::flac:
      return "FLAC";
    case Container::ogg:
      return "Ogg";
    case Container::mp4:
      return "MP4";
    case Container::quicktime:
      return "QuickTime";
    case Container::webm:
      return "WebM";
    case Container::matroska:
      return "Matroska";
  }
  return "unknown";
}

std::optional<MediaFacts> probe_media(std::string_view bytes) {
  for (auto probe : {probe_wav, probe_flac, probe_ogg, probe_iso, probe_ebml, probe_mpeg_audio}) {
    if (auto facts = probe(bytes)) return facts;
  }
  return std::nullopt;
}

std::optional<MediaFacts> probe_wav(std::string_view bytes) {
  if (!has_tag(bytes, 0, "RIFF") || !has_tag(bytes, 8, "WAVE")) return std::nullopt;
  MediaFacts facts{Container::wav, std::nullopt, true, false};
  std::uint64_t byte_rate = 0;
  std::size_t at = 12;
  for (int chunk = 0; chunk < max_wav_chunks; ++chunk) {
    const auto id = bytes_at(bytes, at, 4);
    const auto size = little_endian(bytes, at + 4, 4);
    if (!id || !size) break;
    if (*id == "fmt ") {
      // fmt: format (2), channels (2), sample rate (4), then the byte rate.
      byte_rate = little_endian(bytes, at + 16, 4).value_or(0);
    } else if (*id == "data") {
      // A streamed WAV says 0xFFFFFFFF: what is actually there counts.
      const std::uint64_t present = std::min<std::uint64_t>(*size, bytes.size() - (at + 8));
      if (byte_rate > 0)
        facts.seconds = static_cast<double>(present) / static_cast<double>(byte_rate);
      break;
    }
    at += 8 + *size + (*size & 1);  // chunks are padded to an even size
  }
  return facts;
}

std::optional<MediaFacts> probe_flac(std::string_view bytes) {
  if (!has_tag(bytes, 0, "fLaC")) return std::nullopt;
  MediaFacts facts{Container::flac, std::nullopt, true, false};
  // STREAMINFO comes first (block type 0); from its 11th byte: 20 bits of sample rate, 3 of
  // channels, 5 of bits per sample, 36 of total samples.
  const auto block_type = big_endian(bytes, 4, 1);
  const auto packed = big_endian(bytes, 18, 8);
  if (block_type && (*block_type & 0x7F) == 0 && packed) {
    const std::uint64_t rate = *packed >> 44;
    const std::uint64_t samples = *packed & ((std::uint64_t{1} << 36) - 1);
    if (rate > 0 && samples > 0) {
      facts.seconds = static_cast<double>(samples) / static_cast<double>(rate);
    }
  }
  return facts;
}

}  // namespace clef::detail
