// The implementation of media_probe.hpp's MPEG audio (MP3, ADTS AAC) and Ogg probes: containers
// whose length is read from their frames or pages rather than a header field.
#include <algorithm>
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
  unsigned padding = 0;
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
  frame.padding = (*header >> 9) & 1;
  return frame;
}

unsigned samples_per_frame(const MpegFrame& frame) {
  if (frame.layer == 3) return 384;
  if (frame.layer == 2 || frame.version == 3) return 1152;
  return 576;
}

/// The frame's length in bytes; 0 for free format, whose length no header states.
std::size_t frame_bytes(const MpegFrame& frame) {
  if (frame.kbps == 0) return 0;
  const std::size_t bits_per_second = std::size_t{frame.kbps} * 1000;
  if (frame.layer == 3) return (12 * bits_per_second / frame.rate + frame.padding) * 4;
  const std::size_t factor = frame.layer == 1 && frame.version != 3 ? 72 : 144;
  return factor * bits_per_second / frame.rate + frame.padding;
}

/// A frame at `at` whose next frame follows where its length says, with the same version, layer
/// and rate (or the file ends there): what tells MPEG audio from bytes that merely look like a
/// frame header (a JPEG, random data).
std::optional<MpegFrame> chained_frame_at(std::string_view bytes, std::size_t at) {
  auto frame = mpeg_frame_at(bytes, at);
  if (!frame) return std::nullopt;
  const std::size_t length = frame_bytes(*frame);
  if (length < 4) return std::nullopt;
  const std::size_t next_at = at + length;
  if (next_at == bytes.size()) return frame;        // a file of one whole frame
  if (next_at > bytes.size()) return std::nullopt;  // a "frame" longer than the file
  const auto next = mpeg_frame_at(bytes, next_at);
  if (!next || next->version != frame->version || next->layer != frame->layer ||
      next->rate != frame->rate) {
    return std::nullopt;
  }
  return frame;
}

/// The stream's length in samples: every frame walked from `first` (a damaged stretch is skipped
/// to the next chained frame), ending at the end or at a trailing tag.
std::uint64_t walked_samples(std::string_view bytes, const MpegFrame& first) {
  std::uint64_t samples = 0;
  std::size_t at = first.at;
  while (at + 4 <= bytes.size()) {
    if (has_tag(bytes, at, "TAG") || has_tag(bytes, at, "APETAGEX")) break;
    const auto frame = mpeg_frame_at(bytes, at);
    const std::size_t length = frame ? frame_bytes(*frame) : 0;
    if (!frame || length < 4 || frame->rate != first.rate) {
      ++at;  // resynchronise: the walk only moves forward, so it stays linear
      while (at + 4 <= bytes.size() && !chained_frame_at(bytes, at)) ++at;
      continue;
    }
    samples += samples_per_frame(*frame);
    at += length;
  }
  return samples;
}

/// True when the first frame holds a Xing, Info or VBRI header (encoder data, no audio).
bool has_info_header(std::string_view bytes, const MpegFrame& frame) {
  const std::size_t side_info = frame.version == 3 ? (frame.mono ? 17 : 32) : (frame.mono ? 9 : 17);
  const std::size_t xing = frame.at + 4 + side_info;
  return has_tag(bytes, xing, "Xing") || has_tag(bytes, xing, "Info") ||
         has_tag(bytes, frame.at + 36, "VBRI");
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
  MediaFacts facts{Container::aac, std::nullopt, true, false};
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
  std::size_t start = after_id3(bytes);
  if (start > 0 && start < bytes.size()) {
    // An ID3 tag is put in front of AAC and FLAC too: what follows says what it is.
    const std::string_view rest = bytes.substr(start);
    if (auto flac = probe_flac(rest)) return flac;
    if (auto aac = probe_adts(rest)) return aac;
  }
  // Encoders pad after a tag with zeros; without a tag the first frame is the first byte.
  const std::size_t padding_end = start > 0 ? start + frame_search_window : 0;
  while (start < padding_end && start < bytes.size() && bytes[start] == '\0') ++start;
  const auto frame = chained_frame_at(bytes, start);
  if (!frame) return std::nullopt;
  MediaFacts facts{Container::mp3, std::nullopt, true, false};
  std::uint64_t samples = walked_samples(bytes, *frame);
  // A Xing, Info or VBRI header fills the first frame instead of audio.
  if (has_info_header(bytes, *frame)) {
    samples -= std::min<std::uint64_t>(samples, samples_per_frame(*frame));
  }
  facts.seconds = static_cast<double>(samples) / frame->rate;
  return facts;
}

std::optional<MediaFacts> probe_ogg(std::string_view bytes) {
  if (!has_tag(bytes, 0, "OggS")) return std::nullopt;
  MediaFacts facts{Container::ogg, std::nullopt, true, false};
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
