// The implementation of media_probe.hpp's EBML probe (WebM, Matroska): the length from
// Segment/Info (Duration in TimecodeScale units), sound from a TrackEntry of TrackType 2.
#include <cstring>
#include <functional>

#include "media/byte_reader.hpp"
#include "media/media_probe.hpp"

namespace clef::detail {
namespace {

constexpr std::uint64_t ebml_header_id = 0x1A45DFA3;
constexpr std::uint64_t doc_type_id = 0x4282;
constexpr std::uint64_t segment_id = 0x18538067;
constexpr std::uint64_t info_id = 0x1549A966;
constexpr std::uint64_t timecode_scale_id = 0x2AD7B1;
constexpr std::uint64_t duration_id = 0x4489;
constexpr std::uint64_t tracks_id = 0x1654AE6B;
constexpr std::uint64_t track_entry_id = 0xAE;
constexpr std::uint64_t track_type_id = 0x83;
constexpr std::uint64_t cluster_id = 0x1F43B675;
constexpr std::uint64_t video_track_type = 1;
constexpr std::uint64_t audio_track_type = 2;

/// The length of an EBML variable-size integer from its first byte (1..8), or 0 if invalid.
std::size_t vint_length(std::uint64_t first_byte, std::size_t max_length) {
  for (std::size_t length = 1; length <= max_length; ++length) {
    if (first_byte & (0x80u >> (length - 1))) return length;
  }
  return 0;
}

struct Element {
  std::uint64_t id = 0;
  std::string_view body;
  bool runs_to_end = false;  // unknown size (a live stream): the rest of the parent
  std::size_t next = 0;
};

std::optional<Element> element_at(std::string_view area, std::size_t at) {
  const auto first = big_endian(area, at, 1);
  const std::size_t id_length = first ? vint_length(*first, 4) : 0;
  const auto id = id_length ? big_endian(area, at, id_length) : std::nullopt;
  const auto size_first = big_endian(area, at + id_length, 1);
  const std::size_t size_length = size_first ? vint_length(*size_first, 8) : 0;
  const auto raw = size_length ? big_endian(area, at + id_length, size_length) : std::nullopt;
  if (!id || !raw) return std::nullopt;
  const std::uint64_t marker = std::uint64_t{1} << (7 * size_length);
  const std::uint64_t size = *raw & (marker - 1);
  const std::size_t start = at + id_length + size_length;
  Element element;
  element.id = *id;
  element.runs_to_end = size == marker - 1;
  const std::size_t available = area.size() - start;
  const std::size_t length = element.runs_to_end || size > available ? available : size;
  element.body = area.substr(start, length);
  element.next = start + length;
  return element;
}

/// Calls `visit` for each element directly inside `area`; an element of unknown size ends it.
void for_each_element(std::string_view area, const std::function<bool(const Element&)>& visit) {
  std::size_t at = 0;
  while (at < area.size()) {
    const auto element = element_at(area, at);
    if (!element || !visit(*element) || element->runs_to_end) return;
    at = element->next;
  }
}

std::optional<double> ebml_float(std::string_view body) {
  if (body.size() == 4) {
    const auto bits = static_cast<std::uint32_t>(big_endian(body, 0, 4).value_or(0));
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  if (body.size() == 8) {
    const std::uint64_t bits = big_endian(body, 0, 8).value_or(0);
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  return std::nullopt;
}

void read_info(std::string_view info, MediaFacts& facts) {
  std::uint64_t nanoseconds_per_tick = 1000000;
  std::optional<double> ticks;
  for_each_element(info, [&](const Element& element) {
    if (element.id == timecode_scale_id && !element.body.empty() && element.body.size() <= 8) {
      nanoseconds_per_tick = big_endian(element.body, 0, element.body.size()).value_or(0);
    }
    if (element.id == duration_id) ticks = ebml_float(element.body);
    return true;
  });
  // NaN and infinities fail the comparison and are left unknown.
  if (ticks && *ticks > 0 && *ticks < 1e15 && nanoseconds_per_tick > 0) {
    facts.seconds = *ticks * static_cast<double>(nanoseconds_per_tick) / 1e9;
  }
}

/// Whether Tracks holds an audio and a video TrackEntry.
void read_tracks(std::string_view tracks, MediaFacts& facts) {
  bool audio = false;
  bool video = false;
  for_each_element(tracks, [&](const Element& entry) {
    if (entry.id != track_entry_id) return true;
    for_each_element(entry.body, [&](const Element& field) {
      if (field.id == track_type_id && field.body.size() == 1) {
        const auto type = big_endian(field.body, 0, 1);
        audio = audio || type == audio_track_type;
        video = video || type == video_track_type;
      }
      return true;
    });
    return true;
  });
  facts.has_sound = audio;
  facts.has_picture = video;
}

void read_segment(std::string_view segment, MediaFacts& facts) {
  for_each_element(segment, [&](const Element& element) {
    if (element.id == info_id) read_info(element.body, facts);
    if (element.id == tracks_id) read_tracks(element.body, facts);
    return element.id != cluster_id;  // Info and Tracks come before the media
  });
}

}  // namespace

std::optional<MediaFacts> probe_ebml(std::string_view bytes) {
  const auto header = element_at(bytes, 0);
  if (!header || header->id != ebml_header_id) return std::nullopt;
  std::string_view doc_type;
  for_each_element(header->body, [&](const Element& element) {
    if (element.id == doc_type_id) doc_type = element.body;
    return true;
  });
  // DocType may be padded with NULs.
  doc_type = doc_type.substr(0, doc_type.find('\0'));
  if (doc_type != "webm" && doc_type != "matroska") return std::nullopt;
  MediaFacts facts;
  facts.container = doc_type == "webm" ? Container::webm : Container::matroska;
  if (header->runs_to_end) return facts;
  for_each_element(bytes.substr(header->next), [&](const Element& element) {
    if (element.id == segment_id) read_segment(element.body, facts);
    return element.id != segment_id;
  });
  return facts;
}

}  // namespace clef::detail
