// The implementation of item_images.hpp.
#include "batch/item_images.hpp"

#include <nlohmann/json.hpp>

#include "clef/json.hpp"

namespace clef::cli {
namespace {

/// The most images one item may name: every server takes fewer (Workers AI 4, llama.cpp 8).
constexpr std::size_t max_item_images = 16;

Result<std::vector<std::string>> paths_in(const std::string& field) {
  if (field.empty()) return std::vector<std::string>{};
  if (field.front() != '[') return std::vector<std::string>{field};
  auto parsed = parse_json(field, "the image field");
  std::vector<std::string> paths;
  if (parsed && parsed->is_array() && parsed->size() <= max_item_images) {
    for (const auto& path : parsed.value()) {
      if (!path.is_string() || path.get_ref<const std::string&>().empty()) break;
      paths.push_back(path.get<std::string>());
    }
    if (paths.size() == parsed->size()) return paths;
  }
  return make_error(ErrorKind::invalid_input,
                    "the image field is a path or an array of at most 16 paths", "--image-field");
}

}  // namespace

Image stand_in_image() {
  static const std::string header(
      "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x01\x18\0\0\x01\x18\x08\x02\0\0\0", 29);
  return Image::from_bytes(header).value();
}

std::string directory_of(const std::string& input) {
  const auto slash = input.rfind('/');
  if (input == "-" || slash == std::string::npos) return ".";
  return slash == 0 ? "/" : input.substr(0, slash);
}

Result<std::vector<Image>> item_images(const std::string& field,
                                       const std::string& base_directory) {
  auto paths = paths_in(field);
  if (!paths) return paths.error();
  std::vector<Image> images;
  for (const auto& path : paths.value()) {
    const std::string resolved = path.front() == '/' ? path : base_directory + "/" + path;
    auto image = Image::from_file(resolved);
    if (!image) return image.error();
    images.push_back(std::move(image).value());
  }
  return images;
}

}  // namespace clef::cli
