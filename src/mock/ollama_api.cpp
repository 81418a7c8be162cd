// Ollama's own API, served by the Ollama profile: /api/show, /api/tags and /api/version.
#include "mock/ollama_api.hpp"

#include <set>

#include "clef/ollama.hpp"
#include "mock/answers.hpp"
#include "mock/profile.hpp"
#include "mock/request_body.hpp"
#include "util/json_text.hpp"

namespace clef::mock_detail {
namespace {

void refuse(httplib::Response& res, int status, const std::string& why) {
  res.status = status;
  res.set_content(clef::dump_json({{"error", why}}), "application/json");
}

/// The model /api/show asks about (its "model", else its "name"), or why it cannot be read.
std::optional<std::string> asked_model(const std::string& text, std::string& problem) {
  const auto body = parse_body(text, problem);
  if (!body) {
    problem = "invalid JSON body: " + problem;
    return std::nullopt;
  }
  if (!body->is_object()) {
    problem = "request body must be a JSON object";
    return std::nullopt;
  }
  for (const char* key : {"model", "name"}) {
    const auto field = body->find(key);
    if (field != body->end() && !field->is_string()) {
      problem = std::string(key) + ": must be a string, not " + field->type_name();
      return std::nullopt;
    }
  }
  std::string model = detail::string_field(*body, "model");
  if (model.empty()) model = detail::string_field(*body, "name");
  return ollama_name(model);
}

}  // namespace

void show_model(const MockSettings& s, const httplib::Request& req, httplib::Response& res) {
  std::string problem;
  const auto model = asked_model(req.body, problem);
  if (!model) return refuse(res, 400, problem);
  Json capabilities;
  if (serves(s, MockProfile::ollama, *model)) {
    capabilities = {"completion", "decision", "vision"};
  } else if (is_other_model(s, MockProfile::ollama, *model)) {
    capabilities = {"completion"};
  } else {
    return refuse(res, 404, "model '" + *model + "' not found");
  }
  // An MLX build is a Safetensors model to Ollama; the rest are GGUF.
  const char* format = is_mlx_or_safetensors_tag(*model) ? "safetensors" : "gguf";
  res.set_content(clef::dump_json({{"capabilities", capabilities},
                                   {"details", {{"format", format}, {"family", "clef"}}}}),
                  "application/json");
}

void list_tags(const MockSettings& s, httplib::Response& res) {
  Json list = Json::array();
  std::set<std::string> listed;
  auto add = [&](const std::string& model) {
    const std::string name = ollama_name(model);
    if (!listed.insert(name).second) return;
    const auto digest = s.digests.find(name);
    char fallback[17];
    std::snprintf(fallback, sizeof fallback, "%016llx",
                  static_cast<unsigned long long>(fnv1a(name)));
    list.push_back({{"name", name},
                    {"model", name},
                    {"size", 5400000000LL},
                    {"digest", digest != s.digests.end() ? digest->second
                                                         : std::string(fallback) + fallback}});
  };
  for (const auto& m : s.models) add(m);
  for (const auto& m : s.other_models) add(m);
  res.set_content(clef::dump_json({{"models", list}}), "application/json");
}

void report_version(const MockSettings& s, httplib::Response& res) {
  res.set_content(clef::dump_json({{"version", s.version}}), "application/json");
}

bool too_old_for_system_one(const std::string& version) {
  return !version_at_least(version, minimum_ollama_version);  // unreadable counts as too old
}

}  // namespace clef::mock_detail
