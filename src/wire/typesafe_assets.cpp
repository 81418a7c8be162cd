// The implementation of typesafe_assets.hpp. The limits are those TypeSafe's clients publish for
// Jev (jevclient, Comfy Router, typesafe-mcp): PNG or JPEG, 280 to 1568 pixels a side, 16 MiB an
// image, 32 MiB a request; OpenRouter's assets schema gives the map's shape.
#include "wire/typesafe_assets.hpp"

#include <algorithm>
#include <set>

#include "clef/json.hpp"
#include "media/file_bytes.hpp"
#include "util/json_text.hpp"
#include "wire/backend_wire.hpp"

namespace clef::detail {
namespace {

constexpr std::size_t asset_mib = 1024u * 1024u;
constexpr std::size_t max_image_bytes = 16 * asset_mib;
constexpr std::size_t max_body_bytes = 32 * asset_mib;
constexpr std::uint32_t min_side = 280;
constexpr std::uint32_t max_side = 1568;
constexpr std::size_t max_reference_length = 64;

bool has_box(const DecisionRequest& request) {
  return std::any_of(request.questions.begin(), request.questions.end(),
                     [](const Question& q) { return q.type == QuestionType::box; });
}

/// The model's own name, after any provider prefix ("typesafe/jev-1.14" → "jev-1.14").
std::string bare_name(const std::string& model) {
  const auto slash = model.rfind('/');
  return slash == std::string::npos ? model : model.substr(slash + 1);
}

bool is_jev(const std::string& model) {
  return bare_name(model).rfind("jev-", 0) == 0;
}

/// A Jev before 1.14, which answers a box with a bare "Invalid request.": jev-latest (still
/// 1.13) and jev-1.N for N < 14.
bool jev_without_boxes(const std::string& model) {
  const std::string name = bare_name(model);
  if (name == "jev-latest") return true;
  if (name.rfind("jev-1.", 0) != 0) return false;
  std::size_t minor = 0, digits = 6;
  while (digits < name.size() && digits < 9 && name[digits] >= '0' && name[digits] <= '9') {
    minor = minor * 10 + static_cast<std::size_t>(name[digits++] - '0');
  }
  return digits > 6 && minor < 14;
}

std::string indexed(std::size_t i) {
  return "images[" + std::to_string(i) + "]";
}

Error refused(std::string message, std::string where) {
  return make_error(ErrorKind::invalid_input, std::move(message), std::move(where));
}

/// Whether `reference` is in a string value of `value` (TypeSafe does not look inside keys).
bool mentioned_in(const Json& value, const std::string& reference, int depth = 0) {
  if (value.is_string())
    return value.get_ref<const std::string&>().find(reference) != std::string::npos;
  // As deep as clef reads JSON at all (max_json_depth): a reference found nowhere is refused.
  if (depth > static_cast<int>(max_json_depth) || (!value.is_object() && !value.is_array())) {
    return false;
  }
  return std::any_of(value.begin(), value.end(),
                     [&](const Json& item) { return mentioned_in(item, reference, depth + 1); });
}

bool mentioned_in(const Guidance& guidance, const std::string& reference) {
  if (!guidance.is_structured()) return guidance.text().find(reference) != std::string::npos;
  auto value = clef::parse_json(guidance.text(), "guidance");
  return value && mentioned_in(value.value(), reference);
}

/// Where TypeSafe places an image: the state, an instruction or a criterion.
bool mentioned(const DecisionRequest& request, const std::string& reference) {
  auto state = clef::parse_json(request.state.wire_json(), "state");
  if (state && mentioned_in(state.value(), reference)) return true;
  for (const auto& q : request.questions) {
    if (mentioned_in(q.instructions, reference)) return true;
    for (const auto& option : q.options) {
      if (option.description && mentioned_in(*option.description, reference)) return true;
    }
    for (const auto& level : q.levels) {
      if (level.find(reference) != std::string::npos) return true;
    }
    for (const auto& description : q.level_descriptions) {
      if (description && mentioned_in(*description, reference)) return true;
    }
    for (const auto& meaning : {q.true_means, q.false_means}) {
      if (meaning && meaning->find(reference) != std::string::npos) return true;
    }
  }
  return false;
}

bool well_formed(const std::string& reference) {
  return !reference.empty() && reference.size() <= max_reference_length &&
         std::all_of(reference.begin(), reference.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
         });
}

Status check_asset_image(const Image& image, std::size_t i) {
  if (image.format() == ImageFormat::webp) {
    return refused("image is WebP; TypeSafe's assets take PNG or JPEG only", indexed(i));
  }
  if (image.bytes().size() > max_image_bytes) {
    return refused("image is " + std::to_string(image.bytes().size()) + " bytes (" +
                       mib_text(image.bytes().size()) +
                       "), over TypeSafe's 16 MiB (16777216 bytes) per image",
                   indexed(i));
  }
  const auto size = image.size();
  if (!size) {
    return refused(
        "the image's header is cut short, so its size cannot be read; TypeSafe refuses an image "
        "outside 280 to 1568 pixels a side",
        indexed(i));
  }
  if (std::min(size->width, size->height) < min_side ||
      std::max(size->width, size->height) > max_side) {
    return refused("image is " + std::to_string(size->width) + " x " +
                       std::to_string(size->height) +
                       " pixels; TypeSafe takes 280 to 1568 pixels a side (it does not resize)",
                   indexed(i));
  }
  return {};
}

Status check_references(const DecisionRequest& request) {
  if (!request.image_references.empty() &&
      request.image_references.size() != request.images.size()) {
    return refused("image_references has " + std::to_string(request.image_references.size()) +
                       " entries for " + std::to_string(request.images.size()) + " images",
                   "image_references");
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < request.images.size(); ++i) {
    const std::string reference = image_reference(request, i);
    // Named by the caller: that name; else the image (image_1 is images[0]'s).
    const std::string where = request.image_references.empty()
                                  ? indexed(i) + " (" + reference + ")"
                                  : "image_references[" + std::to_string(i) + "]";
    if (!well_formed(reference)) {
      return refused("image reference \"" + reference +
                         "\" must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'",
                     where);
    }
    if (!seen.insert(reference).second) {
      return refused("image reference \"" + reference + "\" is given twice", where);
    }
    // TypeSafe matches references as plain text: one inside another (image_1 in image_12)
    // would place an image where the other's reference is.
    for (std::size_t j = 0; j < request.images.size(); ++j) {
      const std::string other = image_reference(request, j);
      if (j != i && other != reference && other.find(reference) != std::string::npos) {
        return refused("image reference \"" + reference + "\" occurs inside \"" + other +
                           "\"; TypeSafe matches references as plain text, so each must be "
                           "distinct from every part of the others",
                       where);
      }
    }
    if (!mentioned(request, reference)) {
      return refused("image reference \"" + reference +
                         "\" appears nowhere in the state or the questions; TypeSafe refuses an "
                         "image nothing refers to (write \"" +
                         reference + "\" where the image belongs, such as {\"photo\": \"" +
                         reference + "\"} and \"the mug in `photo`\")",
                     where);
    }
  }
  return {};
}

}  // namespace

bool in_assets_form(const DecisionRequest& request, const std::string& model) {
  return is_jev(model) || has_box(request) || !request.image_references.empty();
}

bool sends_assets(const DecisionRequest& request, Backend backend, const std::string& model) {
  return wire_of(backend).takes_assets_form() && in_assets_form(request, model);
}

std::string image_reference(const DecisionRequest& request, std::size_t i) {
  if (i < request.image_references.size()) return request.image_references[i];
  return "image_" + std::to_string(i + 1);
}

Status check_typesafe_form(const DecisionRequest& request, Backend backend,
                           const std::string& model) {
  const auto box = std::find_if(request.questions.begin(), request.questions.end(),
                                [](const Question& q) { return q.type == QuestionType::box; });
  const BackendWire& wire = wire_of(backend);
  if (box != request.questions.end()) {
    if (const char* form = wire.form_without_boxes()) {
      return refused(std::string("a box question is TypeSafe's (Jev 1.14, on the systemone "
                                 "backend); ") +
                         form + " has no box type",
                     "questions." + box->name);
    }
    if (jev_without_boxes(model)) {
      return refused("model \"" + model +
                         "\" is Jev 1.13 or older, which has no box question: use jev-preview or "
                         "jev-1.14.0",
                     "questions." + box->name);
    }
    if (request.images.empty()) {
      return refused("a box question finds something in an image, and the request has none",
                     "questions." + box->name);
    }
  }
  if (!request.image_references.empty() && !wire.takes_assets_form()) {
    return refused("image references are TypeSafe's assets form, for the systemone backend",
                   "image_references");
  }
  if (!sends_assets(request, backend, model)) return {};
  for (std::size_t i = 0; i < request.images.size(); ++i) {
    if (auto s = check_asset_image(request.images[i], i); !s) return s;
  }
  return check_references(request);
}

void append_assets(std::string& out, const DecisionRequest& request) {
  if (request.images.empty()) return;
  out += ",\"assets\":{";
  for (std::size_t i = 0; i < request.images.size(); ++i) {
    if (i) out += ',';
    // A well-formed reference needs no escaping (check_typesafe_form).
    out += '"' + image_reference(request, i) + "\":{\"type\":\"image\",\"format\":\"";
    out += request.images[i].format() == ImageFormat::png ? "png" : "jpeg";
    out += "\",\"data_base64\":\"" + request.images[i].base64() + "\"}";
  }
  out += '}';
}

Status check_typesafe_body_size(std::size_t body_bytes) {
  if (body_bytes <= max_body_bytes) return {};
  return refused("request is " + std::to_string(body_bytes) + " bytes (" + mib_text(body_bytes) +
                     "), over TypeSafe's 32 MiB (33554432 bytes) per request",
                 "request");
}

void add_typesafe_headers(Headers& headers, const DecisionRequest& request, Backend backend,
                          const std::string& model) {
  if (sends_assets(request, backend, model) && (!request.images.empty() || has_box(request))) {
    headers.emplace_back("TypeSafe-Danger-Zone-Images", "true");
  }
}

}  // namespace clef::detail
