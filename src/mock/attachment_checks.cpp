// The implementation of attachment_checks.hpp. Workers AI's schemas: images match
// "^[Dd][Aa][Tt][Aa]:" (any case) or are {content_type, base64}, at most 4, 4 MiB each and 8 MiB
// in all; clef-omni adds audio (at most 4, "^data:audio/" in lower case exactly, 8 MiB each) and
// videos (at most 2, "^data:video/", 16 MiB each), 16 MiB decoded in all. Other models' schemas
// have no audio or videos property, and such fields are ignored, as a JSON schema without
// additionalProperties: false ignores them — which is why clef refuses them before sending.
#include "mock/attachment_checks.hpp"

#include <cstddef>
#include <string_view>

#include "util/ascii.hpp"

namespace clef::mock_detail {
namespace {

constexpr std::size_t mib = 1024u * 1024u;

struct Field {
  const char* name;
  std::size_t max_items;
  std::string_view prefix;  // the data URL's required start
  bool prefix_any_case;
  std::size_t max_item_bytes;  // decoded
};

constexpr Field workers_images{"images", 4, "data:", true, 4 * mib};
constexpr Field omni_audio{"audio", 4, "data:audio/", false, 8 * mib};
constexpr Field omni_videos{"videos", 2, "data:video/", false, 16 * mib};

bool starts_with(std::string_view text, std::string_view prefix, bool any_case) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const char c = any_case && text[i] >= 'A' && text[i] <= 'Z' ? text[i] - 'A' + 'a' : text[i];
    if (c != prefix[i]) return false;
  }
  return true;
}

/// The decoded size of base64 text (padding subtracted).
std::size_t decoded_bytes(std::string_view base64) {
  std::size_t padding = 0;
  while (padding < 2 && padding < base64.size() && base64[base64.size() - 1 - padding] == '=') {
    ++padding;
  }
  return base64.size() / 4 * 3 - (base64.size() % 4 == 0 ? padding : 0);
}

/// The base64 of one item (a data URL's payload, or an object's "base64"), or a problem.
std::string item_base64(const Field& field, const Json& item, const std::string& at,
                        std::string& problem) {
  if (item.is_string()) {
    const std::string& text = item.get_ref<const std::string&>();
    if (!starts_with(text, field.prefix, field.prefix_any_case)) {
      problem = at + ": must match \"^" + std::string(field.prefix) + "\"" +
                (field.prefix_any_case ? " (any case)" : "") + " or be {content_type, base64}";
      return {};
    }
    const auto comma = text.find(',');
    return comma == std::string::npos ? std::string() : text.substr(comma + 1);
  }
  const auto type = item.is_object() ? item.find("content_type") : item.end();
  const auto data = item.is_object() ? item.find("base64") : item.end();
  if (!item.is_object() || type == item.end() || data == item.end() || !type->is_string() ||
      !data->is_string()) {
    problem = at + ": must be a data URL or {content_type, base64} with both strings";
    return {};
  }
  return data->get<std::string>();
}

/// Checks one field; adds its items' decoded bytes to `total`.
std::string check_field(const Field& field, const Json& body, std::size_t& total) {
  const auto items = body.find(field.name);
  if (items == body.end()) return {};
  if (!items->is_array()) return std::string(field.name) + ": must be an array";
  if (items->size() > field.max_items) {
    return std::string(field.name) + ": at most " + std::to_string(field.max_items) + " items";
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    const std::string at = std::string(field.name) + "[" + std::to_string(i) + "]";
    std::string problem;
    const std::size_t bytes = decoded_bytes(item_base64(field, (*items)[i], at, problem));
    if (!problem.empty()) return problem;
    if (bytes > field.max_item_bytes) {
      return at + ": over " + std::to_string(field.max_item_bytes / mib) + " MiB";
    }
    total += bytes;
  }
  return {};
}

/// Ollama (raw base64 only) and the servers documented with data URLs only: strings.
std::string check_image_strings(MockProfile shape, const Json& images) {
  if (!images.is_array()) return "images: must be an array";
  for (const auto& image : images) {
    if (!image.is_string()) return "images: each image must be a string";
    if (shape == MockProfile::ollama &&
        image.get_ref<const std::string&>().rfind("data:", 0) == 0) {
      return "invalid image input: send raw base64, not a data URL";
    }
  }
  return {};
}

bool is_omni(const Json& body) {
  const auto model = body.find("model");
  if (model == body.end() || !model->is_string()) return false;
  // The schema's own pattern: ^\s*clef-omni\s*$.
  return clef::detail::trimmed_space(model->get_ref<const std::string&>()) == "clef-omni";
}

}  // namespace

std::string check_attachments(MockProfile shape, const Json& body) {
  if (shape != MockProfile::workers_ai) {
    const auto images = body.find("images");
    return images == body.end() ? std::string() : check_image_strings(shape, *images);
  }
  std::size_t images_total = 0;
  if (auto problem = check_field(workers_images, body, images_total); !problem.empty()) {
    return problem;
  }
  if (images_total > 8 * mib) return "images: over 8 MiB decoded in all";
  if (!is_omni(body)) return {};
  std::size_t clips_total = 0;
  for (const Field& field : {omni_audio, omni_videos}) {
    if (auto problem = check_field(field, body, clips_total); !problem.empty()) return problem;
  }
  if (clips_total > 16 * mib) return "audio and videos: over 16 MiB decoded in all";
  return {};
}

}  // namespace clef::mock_detail
