// The implementation of wire_request.hpp: DecisionRequest -> the exact wire JSON one backend
// expects.
#include "wire/wire_request.hpp"

#include <set>

#include "model/question_wire.hpp"
#include "util/json_text.hpp"
#include "wire/backend_wire.hpp"
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

Status append_extra_fields(std::string& out, const DecisionRequest& request,
                           const std::set<std::string>& known) {
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
  PreparedQuestions prepared;
  if (auto s = append_questions(prepared.wire_json, request.questions); !s) return s.error();
  return serialize_request(request, backend, model, prepared);
}

Result<std::string> serialize_request(const DecisionRequest& request, Backend backend,
                                      const std::string& model,
                                      const PreparedQuestions& questions) {
  if (request.state.blank()) {
    return make_error(ErrorKind::invalid_input, "the state is empty: there is nothing to judge",
                      "state");
  }
  if (!request.state.valid_utf8()) {
    return make_error(ErrorKind::invalid_input, "state text is not valid UTF-8", "state");
  }
  if (model.empty()) return make_error(ErrorKind::invalid_input, "no model named", "model");
  const BackendWire& wire = wire_of(backend);
  if (const char* refusal = wire.keep_alive_refusal(); refusal && request.keep_alive) {
    return make_error(ErrorKind::invalid_input,
                      std::string("keep_alive is an Ollama setting; ") + refusal + " it",
                      "keep_alive");
  }
  if (auto s = check_typesafe_form(request, backend, model); !s) return s.error();
  if (auto s = check_attachments(request, backend, model); !s) return s.error();
  auto body = wire.write_body(request, model, questions);
  if (!body) return body.error();
  std::string out = std::move(body).value();
  out.pop_back();  // the closing brace: extra fields go before it
  if (auto s = append_extra_fields(out, request, wire.fields_sent()); !s) return s.error();
  out += '}';
  if (auto s = wire.check_body_size(out.size(), model); !s) return s.error();
  if (sends_assets(request, backend, model)) {
    if (auto s = check_typesafe_body_size(out.size()); !s) return s.error();
  }
  return out;
}

std::string decision_url(const ClientOptions& options, const std::string& base_url,
                         const std::string& model) {
  return wire_of(options.backend).decision_url(options, base_url, model);
}

Result<std::string> body_model_name(Backend backend, const std::string& model) {
  return wire_of(backend).body_model_name(model);
}

// The System One form, which every backend but OpenAI's writes.

Result<std::string> BackendWire::write_body(const DecisionRequest& request,
                                            const std::string& model,
                                            const PreparedQuestions& questions) const {
  std::string out;
  out.reserve(256 + request.state.wire_json().size() + questions.wire_json.size());
  out += "{\"model\":";
  if (!try_append_json_string(out, model)) return not_utf8_error("model");
  out += ",\"state\":";
  out += request.state.wire_json();
  // TypeSafe's images go before the questions that name them, as its published examples put them.
  const bool assets = takes_assets_form() && in_assets_form(request, model);
  if (assets) append_assets(out, request);
  out += ",\"questions\":";
  out += questions.wire_json;
  // Ollama wants raw base64 images and refuses data URLs (it takes no audio or video).
  if (!assets) append_attachments(out, "images", request.images, raw_base64_images());
  append_attachments(out, "audio", request.audio, false);
  append_attachments(out, "videos", request.videos, false);
  if (request.keep_alive) {
    out += ",\"keep_alive\":";
    out += request.keep_alive->wire_json();
  }
  out += '}';
  return out;
}

const std::set<std::string>& BackendWire::fields_sent() const {
  static const std::set<std::string> systemone = {"model",  "state", "questions", "images",
                                                  "assets", "audio", "videos",    "keep_alive"};
  return systemone;
}

std::string BackendWire::decision_url(const ClientOptions&, const std::string& base_url,
                                      const std::string&) const {
  return base_url + "/v1/systemone";
}

Result<std::string> BackendWire::body_model_name(const std::string& model) const {
  return model;
}

}  // namespace clef::detail
