// The implementation of media_probe.hpp's ISO base media probe (MP4, M4A, QuickTime): the length
// from moov/mvhd (or mvex/mehd for a fragmented file), sound from a track whose handler is "soun".
#include <functional>

#include "media/byte_reader.hpp"
#include "media/media_probe.hpp"

namespace clef::detail {
namespace {

using BoxVisitor = std::function<void(std::string_view type, std::string_view body)>;

/// Calls `visit` for each box directly inside `area`, stopping at the first malformed one.
/// Each box is at least 8 bytes, so the loop ends within area.size() / 8 steps.
void for_each_box(std::string_view area, const BoxVisitor& visit) {
  std::size_t at = 0;
  while (at < area.size()) {
    const auto size32 = big_endian(area, at, 4);
    const auto type = bytes_at(area, at + 4, 4);
    if (!size32 || !type) return;
    std::uint64_t size = *size32;
    std::size_t header = 8;
    if (size == 1) {  // a 64-bit size follows the type
      const auto large = big_endian(area, at + 8, 8);
      if (!large) return;
      size = *large;
      header = 16;
    } else if (size == 0) {  // the box runs to the end
      size = area.size() - at;
    }
    if (size < header || size > area.size() - at) {
      // A box cut short (a truncated file): what is there is still read.
      if (size < header) return;
      size = area.size() - at;
    }
    visit(*type, area.substr(at + header, static_cast<std::size_t>(size) - header));
    at += static_cast<std::size_t>(size);
  }
}

/// (timescale, duration) from an mvhd or mehd body, version 0 or 1.
struct Timing {
  std::uint64_t timescale = 0;
  std::uint64_t duration = 0;
};

Timing movie_header_timing(std::string_view mvhd) {
  const bool long_fields = big_endian(mvhd, 0, 1).value_or(0) == 1;
  const std::size_t at = long_fields ? 20 : 12;
  Timing timing;
  timing.timescale = big_endian(mvhd, at, 4).value_or(0);
  timing.duration = big_endian(mvhd, at + 4, long_fields ? 8 : 4).value_or(0);
  if (timing.duration == (long_fields ? ~std::uint64_t{0} : 0xFFFFFFFFu)) timing.duration = 0;
  return timing;
}

std::uint64_t fragment_duration(std::string_view mvex) {
  std::uint64_t duration = 0;
  for_each_box(mvex, [&](std::string_view type, std::string_view body) {
    if (type != "mehd") return;
    const bool long_field = big_endian(body, 0, 1).value_or(0) == 1;
    duration = big_endian(body, 4, long_field ? 8 : 4).value_or(0);
  });
  return duration;
}

/// True when a trak's mdia/hdlr names the sound handler.
bool is_sound_track(std::string_view trak) {
  bool sound = false;
  for_each_box(trak, [&](std::string_view type, std::string_view mdia) {
    if (type != "mdia") return;
    for_each_box(mdia, [&](std::string_view inner, std::string_view hdlr) {
      // hdlr: version and flags (4), pre_defined (4), then the handler type.
      if (inner == "hdlr" && has_tag(hdlr, 8, "soun")) sound = true;
    });
  });
  return sound;
}

void read_movie(std::string_view moov, MediaFacts& facts) {
  Timing timing;
  std::uint64_t fragmented = 0;
  bool sound = false;
  for_each_box(moov, [&](std::string_view type, std::string_view body) {
    if (type == "mvhd") timing = movie_header_timing(body);
    if (type == "mvex") fragmented = fragment_duration(body);
    if (type == "trak" && is_sound_track(body)) sound = true;
  });
  const std::uint64_t duration = timing.duration > 0 ? timing.duration : fragmented;
  if (timing.timescale > 0 && duration > 0) {
    facts.seconds = static_cast<double>(duration) / static_cast<double>(timing.timescale);
  }
  facts.has_sound = sound;
}

}  // namespace

std::optional<MediaFacts> probe_iso(std::string_view bytes) {
  if (!has_tag(bytes, 4, "ftyp")) return std::nullopt;
  MediaFacts facts;
  facts.container = has_tag(bytes, 8, "qt  ") ? Container::quicktime : Container::mp4;
  for_each_box(bytes, [&](std::string_view type, std::string_view body) {
    if (type == "moov") read_movie(body, facts);
  });
  return facts;
}

}  // namespace clef::detail
