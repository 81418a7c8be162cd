// Internal: what an audio or video file's own bytes say about it — its container, its length and
// whether it carries sound. Every parser here reads untrusted bytes: bounded loops, checked reads,
// no recursion deeper than the container's fixed nesting.
#pragma once

#include <optional>
#include <string_view>

namespace clef::detail {

enum class Container {
  wav,        ///< RIFF/WAVE
  mp3,        ///< MPEG audio (an ID3 tag or a frame header first)
  aac,        ///< ADTS AAC
  flac,       ///< fLaC
  ogg,        ///< OggS (Vorbis, Opus, FLAC in Ogg)
  mp4,        ///< ISO base media (ftyp): MP4, M4A, 3GP
  quicktime,  ///< ftyp "qt  "
  webm,       ///< EBML with DocType webm
  matroska,   ///< EBML with DocType matroska
};

/// What a container says. Length and sound are nullopt when it does not say (a streamed WebM
/// without Duration, an MP3 of unknown bit rate): the server judges those.
struct MediaFacts {
  Container container = Container::wav;
  std::optional<double> seconds;
  std::optional<bool> has_sound;
  std::optional<bool> has_picture;  ///< a video track (ISO and EBML say; nullopt elsewhere)
};

/// The container's name for messages ("WAV", "MP3", "MP4", ...).
const char* container_name(Container container) noexcept;

/// The facts, or nullopt when the bytes are none of the containers above.
std::optional<MediaFacts> probe_media(std::string_view bytes);

// One probe per family, each returning nullopt when the bytes are not its container.
std::optional<MediaFacts> probe_wav(std::string_view bytes);
std::optional<MediaFacts> probe_flac(std::string_view bytes);
std::optional<MediaFacts> probe_mpeg_audio(std::string_view bytes);
std::optional<MediaFacts> probe_ogg(std::string_view bytes);
std::optional<MediaFacts> probe_iso(std::string_view bytes);
std::optional<MediaFacts> probe_ebml(std::string_view bytes);

}  // namespace clef::detail
