// The implementation of media_probe.hpp's ISO base media probe (MP4, M4A, QuickTime): the length
// from moov/mvhd (or mvex/mehd for a fragmented file), sound from a track whose handler is "soun".
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

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

/// A track: its id (tkhd), handler ("soun", "vide": mdia/hdlr) and timescale (mdia/mdhd).
struct Track {
  std::uint64_t id = 0;
  std::string_view handler;
  std::uint64_t timescale = 0;
};

Track read_track(std::string_view trak) {
  Track track;
  for_each_box(trak, [&](std::string_view type, std::string_view body) {
    if (type == "tkhd") {  // version 1 has 64-bit times before the id
      const bool long_fields = big_endian(body, 0, 1).value_or(0) == 1;
      track.id = big_endian(body, long_fields ? 20 : 12, 4).value_or(0);
    }
    if (type != "mdia") return;
    for_each_box(body, [&](std::string_view inner, std::string_view box) {
      // hdlr: version and flags (4), pre_defined (4), then the handler type.
      if (inner == "hdlr") track.handler = bytes_at(box, 8, 4).value_or("");
      if (inner == "mdhd") track.timescale = movie_header_timing(box).timescale;
    });
  });
  return track;
}

/// The ticks one fragment's samples last: trun's per-sample durations when it carries them,
/// else tfhd's default duration for each sample.
std::uint64_t fragment_ticks(std::string_view trun, std::uint64_t default_duration) {
  const std::uint64_t flags = big_endian(trun, 0, 4).value_or(0) & 0xFFFFFF;
  const std::uint64_t count = big_endian(trun, 4, 4).value_or(0);
  if (!(flags & 0x100)) return count * default_duration;
  // Optional data offset and first-sample flags, then one record per sample.
  std::size_t at = 8 + ((flags & 0x01) ? 4 : 0) + ((flags & 0x04) ? 4 : 0);
  const std::size_t record =
      4 * (1 + ((flags & 0x200) ? 1 : 0) + ((flags & 0x400) ? 1 : 0) + ((flags & 0x800) ? 1 : 0));
  std::uint64_t ticks = 0;
  for (std::uint64_t i = 0; i < count && at + 4 <= trun.size(); ++i, at += record) {
    ticks += big_endian(trun, at, 4).value_or(0);
  }
  return ticks;
}

/// Where a traf's samples end, in its track's ticks: tfdt's start plus its truns' durations.
struct FragmentEnd {
  std::uint64_t track_id = 0;
  std::uint64_t ticks = 0;
};

FragmentEnd fragment_end(std::string_view traf) {
  FragmentEnd end;
  std::uint64_t default_duration = 0;
  std::uint64_t start = 0;
  std::uint64_t length = 0;
  for_each_box(traf, [&](std::string_view box, std::string_view body) {
    const std::uint64_t flags = big_endian(body, 0, 4).value_or(0) & 0xFFFFFF;
    if (box == "tfhd") {
      end.track_id = big_endian(body, 4, 4).value_or(0);
      // base data offset (8) and sample description index (4) come before the duration.
      const std::size_t at = 8 + ((flags & 0x01) ? 8 : 0) + ((flags & 0x02) ? 4 : 0);
      if (flags & 0x08) default_duration = big_endian(body, at, 4).value_or(0);
    }
    if (box == "tfdt") {
      const bool long_field = big_endian(body, 0, 1).value_or(0) == 1;
      start = big_endian(body, 4, long_field ? 8 : 4).value_or(0);
    }
    if (box == "trun") length += fragment_ticks(body, default_duration);
  });
  end.ticks = start + length;
  return end;
}

/// The end of the last fragment (moof/traf), in seconds of its track's timescale: a fragmented
/// file's mvhd covers only what is in moov, often nothing. One pass over the file, each traf
/// looked up by its track id: linear however many boxes, tracks and fragments there are.
double fragments_end(std::string_view file,
                     const std::unordered_map<std::uint64_t, std::uint64_t>& timescale_of_track) {
  double latest = 0;
  for_each_box(file, [&](std::string_view type, std::string_view moof) {
    if (type != "moof") return;
    for_each_box(moof, [&](std::string_view inner, std::string_view traf) {
      if (inner != "traf") return;
      const FragmentEnd end = fragment_end(traf);
      const auto track = timescale_of_track.find(end.track_id);
      if (track == timescale_of_track.end() || track->second == 0) return;
      latest =
          std::max(latest, static_cast<double>(end.ticks) / static_cast<double>(track->second));
    });
  });
  return latest;
}

/// What the moov boxes say, gathered over all of them (a file may hold several) before the one
/// pass over the fragments.
struct Movie {
  Timing timing;
  std::uint64_t fragmented = 0;
  bool has_mvex = false;
  bool any_track = false;
  bool sound = false;
  bool picture = false;
  std::unordered_map<std::uint64_t, std::uint64_t> timescale_of_track;
};

void read_movie(std::string_view moov, Movie& movie) {
  for_each_box(moov, [&](std::string_view type, std::string_view body) {
    if (type == "mvhd") movie.timing = movie_header_timing(body);
    if (type == "mvex") {
      movie.has_mvex = true;
      movie.fragmented = fragment_duration(body);
    }
    if (type != "trak") return;
    const Track track = read_track(body);
    movie.any_track = true;
    movie.sound = movie.sound || track.handler == "soun";
    movie.picture = movie.picture || track.handler == "vide";
    movie.timescale_of_track.emplace(track.id, track.timescale);
  });
}

void read_facts(std::string_view file, const Movie& movie, MediaFacts& facts) {
  // mehd, when a fragmented file has one, is its whole length; mvhd then covers only moov.
  const std::uint64_t duration = movie.fragmented > 0 ? movie.fragmented : movie.timing.duration;
  if (movie.timing.timescale > 0 && duration > 0) {
    facts.seconds = static_cast<double>(duration) / static_cast<double>(movie.timing.timescale);
  }
  if (movie.has_mvex && movie.fragmented == 0) {
    facts.seconds =
        std::max(facts.seconds.value_or(0), fragments_end(file, movie.timescale_of_track));
  }
  if (!movie.any_track) return;  // a movie header alone says nothing of its tracks
  facts.has_sound = movie.sound;
  facts.has_picture = movie.picture;
}

/// HEIF and AVIF images are ISO files too: their brands say so.
bool is_image_brand(std::string_view brand) {
  for (std::string_view image : {"avif", "avis", "heic", "heix", "heim", "heis", "hevc", "hevx",
                                 "mif1", "msf1", "jpeg", "avci"}) {
    if (brand == image) return true;
  }
  return false;
}

}  // namespace

std::optional<MediaFacts> probe_iso(std::string_view bytes) {
  if (!has_tag(bytes, 4, "ftyp")) return std::nullopt;
  if (is_image_brand(bytes_at(bytes, 8, 4).value_or(""))) return std::nullopt;
  MediaFacts facts;
  facts.container = has_tag(bytes, 8, "qt  ") ? Container::quicktime : Container::mp4;
  Movie movie;
  bool any_movie = false;
  for_each_box(bytes, [&](std::string_view type, std::string_view body) {
    if (type != "moov") return;
    any_movie = true;
    read_movie(body, movie);
  });
  if (any_movie) read_facts(bytes, movie, facts);
  return facts;
}

}  // namespace clef::detail
