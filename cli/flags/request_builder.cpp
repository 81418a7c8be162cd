// The implementation of request_builder.hpp: turning validated command-line input into a request.
#include "flags/request_builder.hpp"

namespace clef::cli {

Result<DecisionRequest> build_request(State state, const std::vector<Question>& questions,
                                      const std::vector<std::string>& image_paths,
                                      const std::string& keep_alive) {
  DecisionRequest request;
  request.state = std::move(state);
  request.questions = questions;
  for (const auto& path : image_paths) {
    auto image = Image::from_file(path);
    if (!image) return image.error();
    request.images.push_back(std::move(image).value());
  }
  if (!keep_alive.empty()) {
    auto parsed = KeepAlive::parse(keep_alive);
    if (!parsed) return parsed.error();
    request.keep_alive = std::move(parsed).value();
  }
  return request;
}

}  // namespace clef::cli
