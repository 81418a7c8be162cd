// The implementation of wire_request.hpp: DecisionRequest -> the exact wire JSON one backend
// expects.
#include "wire/wire_request.hpp"

#include <set>

#include "model/question_wire.hpp"
#include "util/json_text.hpp"
#include "wire/ai_gateway.hpp"
#include "wire/openai_dialect.hpp"
#include "wire/request_limits.hpp"
#include "wire/typesafe_assets.hpp"
#include "wire/workers_ai.hpp"

namespace clef::detail {
namespace {

/// Ollama's own wire form is raw base64; everyone else takes data URLs.
template <typename Attachment>
void append_attachments(std::string& out, const char* field,
                        const std::vector<Attachment>& attachments, bool raw_base64) {
  if (attachments.empty()) return;
  out += ",\"";
  out += field;
  out += "\":[";
  for (std::size_t i = 0; i < attachments.size(); ++i) {
    if (i) out += ',';
    out += '"';
    out += raw_base64 ? attachments[i].base64() : attachments[i].data_url();
    out += '"';
  }
  out += ']';
}

/// The fields clef writes itself, which an extra field may not repeat.
const std::set<std::string>& fields_sent(Backend backend) {
  static const std::set<std::string> systemone = {"model",  "state", "questions", "images",
                                                  "assets", "audio", "videos",    "keep_alive"};
  static const std::set<std::string> openai = {"model", "input", "questions"};
  return backend == Backend::openai ? openai : systemone;
}

Status append_extra_fields(std::string& out, const DecisionRequest& request, Backend backend) {
  const std::set<std::string>& known = fields_sent(backend);
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
  if (request.keep_alive && (backend == Backend::workers_ai || backend == Backend::openai)) {
    return make_error(
        ErrorKind::invalid_input,
        std::string("keep_alive is an Ollama setting; ") +
            (backend == Backend::workers_ai ? "Workers AI refuses" : "OpenAI's decisions refuse") +
            " it",
        "keep_alive");
  }
  if (auto s = check_typesafe_form(request, backend, model); !s) return s.error();
  if (auto s = check_attachments(request, backend, model); !s) return s.error();
  if (backend == Backend::openai) {
    auto body = openai_request_body(request, model);
    if (!body) return body.error();
    std::string out = std::move(body).value();
    out.pop_back();  // the closing brace: extra fields go before it
    if (auto s = append_extra_fields(out, request, backend); !s) return s.error();
    return out + '}';
  }

  std::string out;
  out.reserve(256 + request.state.wire_json().size());
  out += "{\"model\":";
  if (auto s = append_json_string(out, model, "model"); !s) return s.error();
  out += ",\"state\":";
  out += request.state.wire_json();
  // TypeSafe's images go before the questions that name them, as its published examples put them.
  const bool assets = sends_assets(request, backend, model);
  if (assets) append_assets(out, request);
  out += ",\"questions\":";
  if (auto s = append_questions(out, request.questions); !s) return s.error();
  // Ollama wants raw base64 images and refuses data URLs (it takes no audio or video).
  if (!assets) append_attachments(out, "images", request.images, backend == Backend::ollama);
  append_attachments(out, "audio", request.audio, false);
  append_attachments(out, "videos", request.videos, false);
  if (request.keep_alive) {
    out += ",\"keep_alive\":";
    out += request.keep_alive->wire_json();
  }
  if (auto s = append_extra_fields(out, request, backend); !s) return s.error();
  out += '}';
  if (auto s = check_body_size(out.size(), backend, model); !s) return s.error();
  if (assets) {
    if (auto s = check_typesafe_body_size(out.size()); !s) return s.error();
  }
  return out;
}

std::string decision_url(const ClientOptions& options, const std::string& base_url,
                         const std::string& model) {
  if (options.backend == Backend::openai) return base_url + "/decisions";
  if (options.backend != Backend::workers_ai) return base_url + "/v1/systemone";
  auto names = workers_model(model);
  const std::string path = names ? names->path : model;
  // Through AI Gateway the base URL is the gateway's Workers AI root (ai_gateway.hpp).
  if (through_gateway(options)) return base_url + "/" + path;
  return base_url + "/accounts/" + options.account_id + "/ai/run/" + path;
}

Result<std::string> body_model_name(Backend backend, const std::string& model) {
  if (backend != Backend::workers_ai) return model;
  auto names = workers_model(model);
  if (!names) return names.error();
  return std::move(names->body);
}

}  // namespace clef::detail
