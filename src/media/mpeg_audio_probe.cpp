// The implementation of media_probe.hpp's MPEG audio (MP3, ADTS AAC) and Ogg probes: containers
// whose length is read from their frames or pages rather than a header field.
#include <optional>

#include "media/byte_reader.hpp"
#include "media/media_probe.hpp"

namespace clef::detail {
namespace {

/// How far past an ID3 tag the first frame header is looked for (encoders pad with zeros).
constexpr std::size_t frame_search_window = 4096;
/// ADTS frames walked at most: 16 MiB of the smallest frames, then the length is unknown.
constexpr std::size_t max_adts_frames = 1u << 22;

struct MpegFrame {
  std::size_t at = 0;
  unsigned version = 0;  // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
  unsigned layer = 0;    // 3 = Layer I, 2 = Layer II, 1 = Layer III
  unsigned kbps = 0;     // 0 = free format
  unsigned rate = 0;
  bool mono = false;
};

unsigned bitrate_kbps(unsigned version, unsigned layer, unsigned index) {
  static const unsigned v1[3][15] = {
      {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},       // Layer III
      {0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},      // Layer II
      {0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448}};  // Layer I
  static const unsigned v2[2][15] = {
      {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},        // Layers II, III
      {0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256}};  // Layer I
  if (version == 3) return v1[layer - 1][index];
  return v2[layer == 3 ? 1 : 0][index];
}

std::optional<MpegFrame> mpeg_frame_at(std::string_view bytes, std::size_t at) {
  const auto header = big_endian(bytes, at, 4);
  if (!header || (*header >> 21) != 0x7FF) return std::nullopt;
  MpegFrame frame;
  frame.at = at;
  frame.version = (*header >> 19) & 3;
  frame.layer = (*header >> 17) & 3;
  const unsigned bitrate_index = (*header >> 12) & 0xF;
  const unsigned rate_index = (*header >> 10) & 3;
  if (frame.version == 1 || frame.layer == 0 || bitrate_index == 15 || rate_index == 3) {
    return std::nullopt;
  }
  static const unsigned rates[3] = {44100, 48000, 32000};
  const unsigned divisor = frame.version == 3 ? 1 : frame.version == 2 ? 2 : 4;
  frame.rate = rates[rate_index] / divisor;
  frame.kbps = bitrate_kbps(frame.version, frame.layer, bitrate_index);
  frame.mono = ((*header >> 6) & 3) == 3;
  return frame;
}

unsigned samples_per_frame(const MpegFrame& frame) {
  if (frame.layer == 3) return 384;
  if (frame.layer == 2 || frame.version == 3) return 1152;
  return 576;
}

/// The frame count a Xing/Info or VBRI header in the first frame states, if any.
std::optional<std::uint64_t> stated_frames(std::string_view bytes, const MpegFrame& frame) {
  const std::size_t side_info = frame.version == 3 ? (frame.mono ? 17 : 32) : (frame.mono ? 9 : 17);
  const std::size_t xing = frame.at + 4 + side_info;
  if (has_tag(bytes, xing, "Xing") || has_tag(bytes, xing, "Info")) {
    const auto flags = big_endian(bytes, xing + 4, 4);
    if (flags && (*flags & 1)) return big_endian(bytes, xing + 8, 4);
    return std::nullopt;
  }
  if (has_tag(bytes, frame.at + 36, "VBRI")) return big_endian(bytes, frame.at + 50, 4);
  return std::nullopt;
}

/// Where the audio starts: after an ID3v2 tag (its size is "syncsafe", 7 bits a byte).
std::size_t after_id3(std::string_view bytes) {
  if (!has_tag(bytes, 0, "ID3")) return 0;
  std::size_t size = 0;
  for (std::size_t i = 6; i < 10; ++i)
    size = size << 7 | (big_endian(bytes, i, 1).value_or(0) & 0x7F);
  const bool footer = (big_endian(bytes, 5, 1).value_or(0) & 0x10) != 0;
  return 10 + size + (footer ? 10 : 0);
}

std::optional<MediaFacts> probe_adts(std::string_view bytes) {
  static const unsigned rates[13] = {96000, 88200, 64000, 48000, 44100, 32000, 24000,
                                     22050, 16000, 12000, 11025, 8000,  7350};
  const auto first = big_endian(bytes, 0, 2);
  const auto rate_byte = big_endian(bytes, 2, 1);
  if (!first || !rate_byte || (*first & 0xFFF6) != 0xFFF0) return std::nullopt;
  const unsigned rate_index = (*rate_byte >> 2) & 0xF;
  if (rate_index >= 13) return std::nullopt;
  MediaFacts facts{Container::aac, std::nullopt, true};
  std::uint64_t blocks = 0;
  std::size_t at = 0;
  for (std::size_t frames = 0; frames < max_adts_frames && at < bytes.size(); ++frames) {
    const auto header = big_endian(bytes, at, 7);
    if (!header || (*header >> 44) != 0xFFF) return facts;  // not a frame: length unknown
    const std::size_t length = (*header >> 13) & 0x1FFF;
    if (length < 7) return facts;
    blocks += (*header & 3) + 1;
    at += length;
  }
  if (at >= bytes.size()) facts.seconds = static_cast<double>(blocks) * 1024 / rates[rate_index];
  return facts;
}

}  // namespace

std::optional<MediaFacts> probe_mpeg_audio(std::string_view bytes) {
  if (auto aac = probe_adts(bytes)) return aac;
  const std::size_t start = after_id3(bytes);
  std::optional<MpegFrame> frame;
  for (std::size_t at = start; at < start + frame_search_window && !frame; ++at) {
    if (at >= bytes.size()) break;
    frame = mpeg_frame_at(bytes, at);
  }
  if (!frame) {
    if (start == 0) return std::nullopt;
    return MediaFacts{Container::mp3, std::nullopt, true};  // an ID3 tag and no frame in reach
  }
  MediaFacts facts{Container::mp3, std::nullopt, true};
  if (const auto frames = stated_frames(bytes, *frame)) {
    facts.seconds = static_cast<double>(*frames) * samples_per_frame(*frame) / frame->rate;
  } else if (frame->kbps > 0) {
    // Constant bit rate: the bytes from the first frame on, at the first frame's rate.
    facts.seconds = static_cast<double>(bytes.size() - frame->at) * 8 / (frame->kbps * 1000.0);
  }
  return facts;
}

std::optional<MediaFacts> probe_ogg(std::string_view bytes) {
  if (!has_tag(bytes, 0, "OggS")) return std::nullopt;
  MediaFacts facts{Container::ogg, std::nullopt, true};
  const auto segments = big_endian(bytes, 26, 1);
  if (!segments) return facts;
  const std::size_t packet = 27 + *segments;
  std::uint64_t rate = 0;
  std::uint64_t pre_skip = 0;
  if (has_tag(bytes, packet, std::string_view("\x01vorbis", 7))) {
    rate = little_endian(bytes, packet + 12, 4).value_or(0);
  } else if (has_tag(bytes, packet, "OpusHead")) {
    rate = 48000;  // Opus granule positions always count 48 kHz samples
    pre_skip = little_endian(bytes, packet + 10, 2).value_or(0);
  }
  // The last page's granule position is the stream's length in samples.
  const auto last = bytes.rfind("OggS");
  const auto granule = little_endian(bytes, last + 6, 8);
  if (rate > 0 && granule && *granule != ~std::uint64_t{0} && *granule > pre_skip) {
    facts.seconds = static_cast<double>(*granule - pre_skip) / static_cast<double>(rate);
  }
  return facts;
}

}  // namespace clef::detail
