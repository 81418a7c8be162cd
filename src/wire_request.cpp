// The implementation of wire_request.hpp: DecisionRequest -> the exact wire JSON one backend
// expects.
#include "wire_request.hpp"

#include <set>

#include "json_text.hpp"
#include "question_wire.hpp"

namespace clef::detail {
namespace {

constexpr std::size_t workers_max_images = 4;
constexpr std::size_t workers_max_image_bytes = 4u * 1024u * 1024u;
constexpr std::size_t ollama_max_body_bytes = 32u * 1024u * 1024u;

Status check_images(const DecisionRequest& request, Backend backend) {
  if (backend != Backend::workers_ai) return {};
  if (request.images.size() > workers_max_images) {
    return make_error(
        ErrorKind::invalid_input,
        "Workers AI takes at most 4 images, got " + std::to_string(request.images.size()),
        "images");
  }
  for (std::size_t i = 0; i < request.images.size(); ++i) {
    if (request.images[i].bytes().size() > workers_max_image_bytes) {
      return make_error(ErrorKind::invalid_input, "Workers AI takes images up to 4 MiB each",
                        "images[" + std::to_string(i) + "]");
    }
  }
  return {};
}

Status append_extra_fields(std::string& out, const DecisionRequest& request) {
  static const std::set<std::string> known = {"model", "state", "questions", "images",
                                              "keep_alive"};
  std::set<std::string> seen;
  for (const auto& [name, json_text] : request.extra_fields) {
    if (known.count(name) || !seen.insert(name).second) {
      return make_error(ErrorKind::invalid_input,
                        "extra field \"" + name + "\" would repeat a field of the request", name);
    }
    auto value = clef::parse_json(json_text, "extra field \"" + name + "\"");
    if (!value) return value.error();
    out += ',';
    if (auto s = append_json_string(out, name, name); !s) return s;
    out += ':';
    out += clef::dump_json(value.value());
  }
  return {};
}

}  // namespace

Result<std::string> serialize_request(const DecisionRequest& request, Backend backend,
                                      const std::string& model) {
  if (auto s = validate(request.questions); !s) return s.error();
  if (request.state.blank()) {
    return make_error(ErrorKind::invalid_input, "the state is empty: there is nothing to judge",
                      "state");
  }
  if (!request.state.valid_utf8()) {
    return make_error(ErrorKind::invalid_input, "state text is not valid UTF-8", "state");
  }
  if (model.empty()) return make_error(ErrorKind::invalid_input, "no model named", "model");
  if (request.keep_alive && backend == Backend::workers_ai) {
    return make_error(ErrorKind::invalid_input,
                      "keep_alive is an Ollama setting; Workers AI "
                      "refuses it",
                      "keep_alive");
  }
  if (auto s = check_images(request, backend); !s) return s.error();

  std::string out;
  out.reserve(256 + request.state.wire_json().size());
  out += "{\"model\":";
  if (auto s = append_json_string(out, model, "model"); !s) return s.error();
  out += ",\"state\":";
  out += request.state.wire_json();
  out += ",\"questions\":";
  if (auto s = append_questions(out, request.questions); !s) return s.error();
  if (!request.images.empty()) {
    out += ",\"images\":[";
    for (std::size_t i = 0; i < request.images.size(); ++i) {
      if (i) out += ',';
      out += '"';
      // Ollama wants raw base64 and refuses data URLs; the others take data URLs.
      out += backend == Backend::ollama ? request.images[i].base64() : request.images[i].data_url();
      out += '"';
    }
    out += ']';
  }
  if (request.keep_alive) {
    out += ",\"keep_alive\":";
    out += request.keep_alive->wire_json();
  }
  if (auto s = append_extra_fields(out, request); !s) return s.error();
  out += '}';
  if (backend == Backend::ollama && out.size() > ollama_max_body_bytes) {
    return make_error(ErrorKind::invalid_input,
                      "request is " + std::to_string(out.size() >> 20) +
                          " MiB; Ollama takes at most 32 MiB with images",
                      "images");
  }
  return out;
}

}  // namespace clef::detail
