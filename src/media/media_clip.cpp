// The implementation of clef/media.hpp: a clip's media type, length and soundtrack, from its bytes.
#include "clef/media.hpp"

#include "media/file_bytes.hpp"
#include "media/media_probe.hpp"
#include "util/base64.hpp"

namespace clef {
namespace {

using detail::Container;

/// The media type for a container heard as audio, or nullptr when it cannot be audio here.
const char* audio_type(Container container) {
  switch (container) {
    case Container::wav:
      return "audio/wav";
    case Container::mp3:
      return "audio/mpeg";
    case Container::aac:
      return "audio/aac";
    case Container::flac:
      return "audio/flac";
    case Container::ogg:
      return "audio/ogg";
    case Container::mp4:
      return "audio/mp4";
    case Container::webm:
      return "audio/webm";
    case Container::matroska:
      return "audio/x-matroska";
    case Container::quicktime:
      return nullptr;
  }
  return nullptr;
}

/// The media type for a container watched as video, or nullptr for an audio-only container.
const char* video_type(Container container) {
  switch (container) {
    case Container::mp4:
      return "video/mp4";
    case Container::quicktime:
      return "video/quicktime";
    case Container::webm:
      return "video/webm";
    case Container::matroska:
      return "video/x-matroska";
    default:
      return nullptr;
  }
}

Error unrecognised(std::string_view bytes, MediaKind kind) {
  if (bytes.empty()) {
    return make_error(ErrorKind::invalid_input, std::string(to_string(kind)) + " clip is empty");
  }
  const std::string known = kind == MediaKind::audio
                                ? "a WAV, MP3, AAC, FLAC, Ogg, M4A/MP4, WebM or Matroska audio file"
                                : "an MP4, QuickTime, WebM or Matroska video";
  return make_error(ErrorKind::invalid_input,
                    "not " + known + ": " + detail::what_the_bytes_are(bytes));
}

/// "this is WAV audio, not a video" / "this is a QuickTime video, not audio".
Error wrong_kind(Container container, MediaKind kind) {
  const std::string name = detail::container_name(container);
  return make_error(ErrorKind::invalid_input, kind == MediaKind::audio
                                                  ? "this is a " + name + " video, not audio"
                                                  : "this is " + name + " audio, not a video");
}

}  // namespace

const char* to_string(MediaKind kind) noexcept {
  return kind == MediaKind::audio ? "audio" : "video";
}

Result<MediaClip> MediaClip::from_bytes(std::string bytes, MediaKind kind, std::size_t max_bytes) {
  const std::string what = std::string(to_string(kind)) + " clip";
  if (bytes.size() > max_bytes) {
    return make_error(ErrorKind::invalid_input,
                      detail::over_limit_text(what, bytes.size(), max_bytes));
  }
  const auto facts = detail::probe_media(bytes);
  if (!facts) return unrecognised(bytes, kind);
  const char* type =
      kind == MediaKind::audio ? audio_type(facts->container) : video_type(facts->container);
  if (type == nullptr) return wrong_kind(facts->container, kind);
  // A container of both kinds says which tracks it holds (MP4, WebM, Matroska).
  const std::string name = detail::container_name(facts->container);
  if (kind == MediaKind::audio && facts->has_sound == false) {
    return make_error(ErrorKind::invalid_input, "this " + name + " has no sound track: not audio");
  }
  if (kind == MediaKind::video && facts->has_picture == false) {
    return make_error(ErrorKind::invalid_input,
                      "this " + name + " has no video track: attach it as audio");
  }
  MediaClip clip;
  clip.m_kind = kind;
  clip.m_media_type = type;
  clip.m_bytes = std::move(bytes);
  clip.m_seconds = facts->seconds;
  if (kind == MediaKind::video) clip.m_soundtrack = facts->has_sound;
  return clip;
}

Result<MediaClip> MediaClip::from_file(const std::string& path, MediaKind kind,
                                       std::size_t max_bytes) {
  return detail::recognise_file<MediaClip>(
      path, max_bytes, std::string(to_string(kind)) + " clip",
      [&](std::string bytes) { return from_bytes(std::move(bytes), kind, max_bytes); });
}

std::string MediaClip::base64() const {
  return detail::base64_encode(m_bytes);
}

std::string MediaClip::data_url() const {
  return "data:" + m_media_type + ";base64," + base64();
}

std::optional<std::string> unheard_soundtracks(const std::vector<MediaClip>& videos) {
  std::string silent;
  bool any_sound = false;
  for (std::size_t i = 0; i < videos.size(); ++i) {
    if (videos[i].has_soundtrack() == false) {
      silent += (silent.empty() ? "" : ", ") + ("videos[" + std::to_string(i) + "]");
    } else if (videos[i].has_soundtrack() == true) {
      any_sound = true;
    }
  }
  if (!any_sound || silent.empty()) return std::nullopt;
  return silent +
         " has no soundtrack, so the model hears no video's sound (only its frames): it hears "
         "sound only when every video has one";
}

}  // namespace clef
