// The implementation of typesafe_checks.hpp. What TypeSafe's clients publish: the header's name
// and when it is needed (jevclient, lm15, LiteLLM), the assets map's fields (OpenRouter's schema),
// the limits (jevclient, Comfy Router), "Invalid request." for a box before Jev 1.14 (lm15) in
// the measured body {"detail": {"error_type": "api_usage_error", "message": …}}, and "Invalid
// image dimensions" (a live 400). What TypeSafe answers without the header, or to a box with no
// image, is not published: the mock refuses both with a 400 in the same shape, in its own words.
#include "mock/typesafe_checks.hpp"

#include <algorithm>

#include "clef/image.hpp"
#include "util/base64.hpp"

namespace clef::mock_detail {
namespace {

constexpr std::size_t max_image_bytes = 16u * 1024u * 1024u;

Reply usage_error(const std::string& message) {
  Reply reply;
  reply.status = 400;
  reply.body = {{"detail", {{"error_type", "api_usage_error"}, {"message", message}}}};
  return reply;
}

bool any_box(const Json& questions) {
  return std::any_of(questions.begin(), questions.end(), [](const Json& q) {
    const Json* type = q.is_object() ? member(q, "type") : nullptr;
    return type && type->is_string() && type->get_ref<const std::string&>() == "box";
  });
}

/// Whether `reference` is in a string value of `value`: TypeSafe does not look inside keys.
bool mentioned_in(const Json& value, const std::string& reference, int depth = 0) {
  if (value.is_string())
    return value.get_ref<const std::string&>().find(reference) != std::string::npos;
  if (depth > 64 || (!value.is_object() && !value.is_array())) return false;
  return std::any_of(value.begin(), value.end(),
                     [&](const Json& item) { return mentioned_in(item, reference, depth + 1); });
}

bool mentioned(const Json& body, const std::string& reference) {
  if (const Json* state = member(body, "state"); state && mentioned_in(*state, reference)) {
    return true;
  }
  const Json* questions = member(body, "questions");
  if (!questions || !questions->is_object()) return false;
  return std::any_of(questions->begin(), questions->end(), [&](const Json& q) {
    const Json* instructions = q.is_object() ? member(q, "instructions") : nullptr;
    const Json* criteria = q.is_object() ? member(q, "criteria") : nullptr;
    return (instructions && mentioned_in(*instructions, reference)) ||
           (criteria && mentioned_in(*criteria, reference));
  });
}

std::optional<Reply> asset_refusal(const std::string& key, const Json& asset, const Json& body) {
  const std::string at = "assets." + key;
  if (key.find_first_not_of(" \t\r\n") == std::string::npos) {
    return usage_error("assets: a key must not be empty or white space");
  }
  if (!asset.is_object()) return usage_error(at + ": must be an object");
  for (const auto& item : asset.items()) {
    if (item.key() != "type" && item.key() != "format" && item.key() != "data_base64") {
      return usage_error(at + "." + item.key() + ": unknown field");
    }
  }
  const Json* type = member(asset, "type");
  if (type && !(type->is_string() && type->get_ref<const std::string&>() == "image")) {
    return usage_error(at + ".type: must be \"image\"");
  }
  const Json* format = member(asset, "format");
  const std::string named = format && format->is_string() ? format->get<std::string>() : "";
  if (named != "png" && named != "jpg" && named != "jpeg") {
    return usage_error(at + ".format: must be png, jpg or jpeg");
  }
  const Json* data = member(asset, "data_base64");
  const auto bytes = data && data->is_string()
                         ? clef::detail::base64_decode(data->get_ref<const std::string&>())
                         : std::nullopt;
  if (!bytes) return usage_error(at + ".data_base64: must be standard padded base64");
  if (bytes->size() > max_image_bytes) return usage_error(at + ": image over 16 MiB");
  auto image = Image::from_bytes(*bytes, max_image_bytes);
  const bool png = named == "png";
  if (!image || (image->format() == ImageFormat::png) != png ||
      image->format() == ImageFormat::webp) {
    return usage_error(at + ": not a " + named + " image");
  }
  const auto size = image->size();
  if (!size || std::min(size->width, size->height) < 280 ||
      std::max(size->width, size->height) > 1568) {
    return usage_error("Invalid image dimensions");
  }
  if (!mentioned(body, key)) {
    return usage_error("Asset \"" + key + "\" is not referenced in the state or the questions");
  }
  return std::nullopt;
}

}  // namespace

bool answers_boxes(const std::string& model) {
  return model == "jev-1.14.0" || model == "jev-preview";
}

std::optional<Reply> typesafe_refusal(const MockRequest& request, const Json& body,
                                      const std::string& model) {
  const Json* assets = member(body, "assets");
  const Json* questions = member(body, "questions");
  const bool box = questions && questions->is_object() && any_box(*questions);
  if (!assets && !box) return std::nullopt;
  if (request.header("TypeSafe-Danger-Zone-Images") != "true") {
    return usage_error(
        "Images and box questions are experimental: send "
        "TypeSafe-Danger-Zone-Images: true");
  }
  if (box && !answers_boxes(model)) return usage_error("Invalid request.");
  if (assets && !assets->is_object()) return usage_error("assets: must be an object");
  if (box && (!assets || assets->empty())) {
    return usage_error("A box question needs an image in assets");
  }
  if (!assets) return std::nullopt;
  for (const auto& item : assets->items()) {
    if (auto refused = asset_refusal(item.key(), item.value(), body)) return refused;
  }
  return std::nullopt;
}

}  // namespace clef::mock_detail
