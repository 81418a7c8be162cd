// The implementation of request_builder.hpp: turning validated command-line input into a request.
#include "flags/request_builder.hpp"

#include <tuple>

namespace clef::cli {

Result<DecisionRequest> build_request(State state, const std::vector<Question>& questions,
                                      const AttachmentPaths& attachments,
                                      const std::string& keep_alive) {
  DecisionRequest request;
  request.state = std::move(state);
  request.questions = questions;
  for (const auto& path : attachments.images) {
    auto image = Image::from_file(path);
    if (!image) return image.error();
    request.images.push_back(std::move(image).value());
  }
  for (const auto& [paths, kind, clips] :
       {std::tuple{&attachments.audio, MediaKind::audio, &request.audio},
        std::tuple{&attachments.videos, MediaKind::video, &request.videos}}) {
    for (const auto& path : *paths) {
      auto clip = MediaClip::from_file(path, kind);
      if (!clip) return clip.error();
      clips->push_back(std::move(clip).value());
    }
  }
  if (!keep_alive.empty()) {
    auto parsed = KeepAlive::parse(keep_alive);
    if (!parsed) return parsed.error();
    request.keep_alive = std::move(parsed).value();
  }
  return request;
}

}  // namespace clef::cli
