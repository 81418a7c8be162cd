// clef: audio and video clips for models that hear and watch (Workers AI's
// @cf/cloudflare/clef-omni), recognised by their bytes, never by file name.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "clef/export.hpp"
#include "clef/result.hpp"

namespace clef {

enum class MediaKind { audio, video };

/// "audio" or "video".
CLEF_API const char* to_string(MediaKind kind) noexcept;

/// An audio or video clip attached to a request, shared by all its questions.
///
///     auto clip = clef::MediaClip::from_file("call.wav", clef::MediaKind::audio);
///     if (!clip) return 1;  // clip.error().where names the file
///     request.audio.push_back(std::move(clip).value());
///
/// Audio: WAV, MP3, AAC (ADTS), FLAC, Ogg (Vorbis, Opus), M4A/MP4, WebM, Matroska.
/// Video: MP4, QuickTime, WebM, Matroska. Which model takes what, and how much, is checked when
/// the request is sent (docs/ask.md, "Images, audio and video").
class CLEF_API MediaClip {
 public:
  /// 16 MiB: clef-omni's largest clip (a video; an audio clip may be 8 MiB).
  static constexpr std::size_t default_max_bytes = 16u * 1024u * 1024u;

  /// Recognises the container from the first bytes; anything else, or audio given as a video
  /// (or a QuickTime movie as audio), is invalid_input.
  static Result<MediaClip> from_bytes(std::string bytes, MediaKind kind,
                                      std::size_t max_bytes = default_max_bytes);
  /// Reads and recognises a file; the error names the path.
  static Result<MediaClip> from_file(const std::string& path, MediaKind kind,
                                     std::size_t max_bytes = default_max_bytes);

  MediaKind kind() const noexcept { return m_kind; }
  /// Lower case, as clef-omni's schema requires: "audio/wav", "audio/mpeg", "video/mp4", ...
  const std::string& media_type() const noexcept { return m_media_type; }
  const std::string& bytes() const noexcept { return m_bytes; }
  /// The length the container states, in seconds; nullopt when it states none (a streamed WebM,
  /// an MP3 of free bit rate): such a clip is sent and the server judges its length.
  std::optional<double> seconds() const noexcept { return m_seconds; }
  /// Video only: whether it has a sound track (nullopt when the container does not say, or for
  /// audio). clef-omni hears a video's sound only when every video in the request has one.
  std::optional<bool> has_soundtrack() const noexcept { return m_soundtrack; }
  /// Standard base64 of the bytes, no prefix.
  std::string base64() const;
  /// "data:audio/wav;base64,...".
  std::string data_url() const;

 private:
  MediaClip() = default;
  MediaKind m_kind = MediaKind::audio;
  std::string m_media_type;
  std::string m_bytes;
  std::optional<double> m_seconds;
  std::optional<bool> m_soundtrack;
};

/// clef-omni hears a video's sound only when every video in the request has one: when some of
/// `videos` have a soundtrack and others do not, a sentence saying which lack one; else nullopt.
CLEF_API std::optional<std::string> unheard_soundtracks(const std::vector<MediaClip>& videos);

}  // namespace clef
