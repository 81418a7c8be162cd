// The implementation of request_limits.hpp. The numbers are the published schemas':
// Workers AI's clef-flash and clef-omni (cloudflare-docs, src/content/workers-ai-models/) and
// Ollama's request cap.
#include "wire/request_limits.hpp"

#include <cstdio>

#include "media/file_bytes.hpp"
#include "wire/backend_wire.hpp"

namespace clef::detail {
namespace {

constexpr std::size_t mib = 1024u * 1024u;

constexpr std::size_t workers_max_images = 4;
constexpr std::size_t workers_max_image_bytes = 4 * mib;
constexpr std::size_t workers_max_images_bytes = 8 * mib;
/// "16 megapixels": clef takes it as 4096 × 4096, the square the limit allows.
constexpr std::uint64_t workers_max_image_pixels = 4096ull * 4096ull;
constexpr std::size_t workers_max_body_bytes = 13 * mib;
constexpr std::size_t ollama_max_body_bytes = 32 * mib;

struct ClipLimits {
  std::size_t count;
  std::size_t bytes;
  double seconds;
  const char* field;   // the request's field
  const char* plural;  // "audio clips"
};
constexpr ClipLimits omni_audio{4, 8 * mib, 300, "audio", "audio clips"};
constexpr ClipLimits omni_videos{2, 16 * mib, 60, "videos", "videos"};
constexpr std::size_t omni_max_clip_bytes = 16 * mib;

std::string indexed(const char* field, std::size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

/// "300.000125 s": as many decimals as it takes (up to 6), so a value just over a limit never
/// reads as the limit itself.
std::string seconds_text(double seconds) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f", seconds);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

/// "8388609 bytes (8.0 MiB)": exact, for the same reason.
std::string bytes_text(std::size_t bytes) {
  return std::to_string(bytes) + " bytes (" + mib_text(bytes) + ")";
}

Status check_image(const Image& image, std::size_t i) {
  if (image.bytes().size() > workers_max_image_bytes) {
    return make_error(ErrorKind::invalid_input,
                      "image is " + bytes_text(image.bytes().size()) +
                          ", over Workers AI's 4 MiB (4194304 bytes) per image",
                      indexed("images", i));
  }
  const auto size = image.size();
  if (size && std::uint64_t{size->width} * size->height > workers_max_image_pixels) {
    char pixels[96];
    std::snprintf(pixels, sizeof pixels, "%u x %u (%.1f megapixels)", size->width, size->height,
                  static_cast<double>(size->width) * size->height / 1e6);
    return make_error(ErrorKind::invalid_input,
                      std::string("image is ") + pixels +
                          ", over Workers AI's 16 megapixels (4096 x 4096) per image",
                      indexed("images", i));
  }
  return {};
}

Status check_clips(const std::vector<MediaClip>& clips, const ClipLimits& limits) {
  if (clips.size() > limits.count) {
    return make_error(ErrorKind::invalid_input,
                      "clef-omni takes at most " + std::to_string(limits.count) + " " +
                          limits.plural + ", got " + std::to_string(clips.size()),
                      limits.field);
  }
  for (std::size_t i = 0; i < clips.size(); ++i) {
    const std::string kind = to_string(clips[i].kind());
    if (clips[i].bytes().size() > limits.bytes) {
      return make_error(ErrorKind::invalid_input,
                        kind + " clip is " + bytes_text(clips[i].bytes().size()) +
                            ", over clef-omni's " + bytes_text(limits.bytes) + " per " + kind +
                            " clip",
                        indexed(limits.field, i));
    }
    if (const auto seconds = clips[i].seconds(); seconds && *seconds > limits.seconds) {
      return make_error(ErrorKind::invalid_input,
                        kind + " clip is " + seconds_text(*seconds) + " long, over clef-omni's " +
                            seconds_text(limits.seconds) + " per " + kind + " clip",
                        indexed(limits.field, i));
    }
  }
  return {};
}

Status check_media(const DecisionRequest& request, const BackendWire& wire,
                   const std::string& model) {
  if (request.audio.empty() && request.videos.empty()) return {};
  const char* field = request.audio.empty() ? "videos" : "audio";
  if (const char* who = wire.images_only()) {
    return make_error(ErrorKind::invalid_input,
                      std::string(who) + " images only, not audio or video", field);
  }
  if (!takes_audio_and_video(model)) {
    return make_error(ErrorKind::invalid_input,
                      "model \"" + model +
                          "\" takes no audio or video: only clef-omni "
                          "(@cf/cloudflare/clef-omni) does",
                      field);
  }
  if (auto s = check_clips(request.audio, omni_audio); !s) return s;
  if (auto s = check_clips(request.videos, omni_videos); !s) return s;
  std::size_t total = 0;
  for (const auto& clip : request.audio) total += clip.bytes().size();
  for (const auto& clip : request.videos) total += clip.bytes().size();
  if (total > omni_max_clip_bytes) {
    return make_error(
        ErrorKind::invalid_input,
        "audio and video come to " + bytes_text(total) +
            " decoded, over clef-omni's 16 MiB (16777216 bytes) for all clips of a request",
        field);
  }
  return {};
}

}  // namespace

bool takes_audio_and_video(const std::string& model) {
  std::string name = model.substr(0, model.find(':'));
  const auto slash = name.rfind('/');
  if (slash != std::string::npos) name.erase(0, slash + 1);
  return name == "clef-omni";
}

Status check_attachments(const DecisionRequest& request, Backend backend,
                         const std::string& model) {
  const BackendWire& wire = wire_of(backend);
  if (auto s = wire.check_images(request); !s) return s;
  return check_media(request, wire, model);
}

Status check_workers_images(const DecisionRequest& request) {
  if (request.images.size() > workers_max_images) {
    return make_error(
        ErrorKind::invalid_input,
        "Workers AI takes at most 4 images, got " + std::to_string(request.images.size()),
        "images");
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < request.images.size(); ++i) {
    if (auto s = check_image(request.images[i], i); !s) return s;
    total += request.images[i].bytes().size();
  }
  if (total > workers_max_images_bytes) {
    return make_error(
        ErrorKind::invalid_input,
        "images come to " + bytes_text(total) +
            " decoded, over Workers AI's 8 MiB (8388608 bytes) for all images of a request",
        "images");
  }
  return {};
}

Status check_ollama_body_size(std::size_t body_bytes) {
  if (body_bytes <= ollama_max_body_bytes) return {};
  return make_error(ErrorKind::invalid_input,
                    "request is " + bytes_text(body_bytes) + "; Ollama takes at most 32 MiB",
                    "request");
}

Status check_workers_body_size(std::size_t body_bytes, const std::string& model) {
  if (takes_audio_and_video(model) || body_bytes <= workers_max_body_bytes) return {};
  return make_error(ErrorKind::invalid_input,
                    "request is " + bytes_text(body_bytes) +
                        ", over Workers AI's 13 MiB (13631488 bytes) per request body",
                    "request");
}

Status BackendWire::check_images(const DecisionRequest&) const {
  return {};
}

Status BackendWire::check_body_size(std::size_t, const std::string&) const {
  return {};
}

}  // namespace clef::detail
