// Each imitated server's shape on success: rounding, confidence, key order, envelope, request
// id, model names (and the cassette tag a profile records under).
#include "mock/profile.hpp"

#include "mock/typesafe_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "clef/backend.hpp"

namespace clef::mock_detail {
namespace {

int decimals_of(MockProfile shape) {
  switch (shape) {
    case MockProfile::workers_ai:
    case MockProfile::ollaya:
      return 4;
    case MockProfile::typesafe:
      return 2;
    default:
      return -1;  // Ollama, llama.cpp, Laya: unrounded floats
  }
}

double entropy_confidence(const std::vector<double>& p) {
  double h = 0;
  for (double x : p)
    if (x > 0) h -= x * std::log(x);
  return 1.0 - h / std::log(static_cast<double>(p.size()));
}

double max_confidence(const std::vector<double>& p) {
  const double n = static_cast<double>(p.size());
  return (n * *std::max_element(p.begin(), p.end()) - 1.0) / (n - 1.0);
}

bool uses_entropy(MockProfile shape) {
  return shape == MockProfile::ollama || shape == MockProfile::laya ||
         shape == MockProfile::workers_ai || shape == MockProfile::ollaya;
}

}  // namespace

Json number_as_sent(MockProfile shape, double value) {
  const int decimals = decimals_of(shape);
  if (decimals >= 0) {
    const double scale = std::pow(10.0, decimals);
    value = std::round(value * scale) / scale;
  }
  const bool integer_encoder = shape == MockProfile::ollama || shape == MockProfile::workers_ai;
  if (integer_encoder && value == std::floor(value)) return static_cast<long long>(value);
  return value;
}

double confidence(MockProfile shape, const std::vector<double>& p) {
  return uses_entropy(shape) ? entropy_confidence(p) : max_confidence(p);
}

Json probabilities_object(MockProfile shape, const std::vector<std::string>& keys,
                          const std::vector<double>& p) {
  std::vector<std::size_t> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (shape == MockProfile::ollama) {  // Go marshals map keys sorted
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return keys[a] < keys[b]; });
  } else if (shape == MockProfile::laya) {  // most likely first
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return p[a] > p[b]; });
  }
  Json out = Json::object();
  for (std::size_t i : order) out[keys[i]] = number_as_sent(shape, p[i]);
  return out;
}

Json decision_body(MockProfile shape, const std::string& model, Json answers,
                   std::size_t request_bytes) {
  const int count = static_cast<int>(answers.size());
  // TypeSafe names the version that answered: jev-latest is still 1.13, jev-preview is 1.14.
  const std::string answered = shape != MockProfile::typesafe ? model
                               : answers_boxes(model)         ? "jev-1.14.0"
                                                              : "jev-1.13.0";
  Json decision = {{"model", answered}, {"answers", std::move(answers)}};
  decision["usage"] = {{"input_tokens", static_cast<long long>(request_bytes / 4)},
                       {"output_tokens", shape == MockProfile::typesafe ? count * 10 : 0}};
  if (shape == MockProfile::laya) {
    decision["action"] = "route";
    decision["routing"] = {{"queue", "default"}};
  }
  if (shape != MockProfile::workers_ai) return decision;
  return {{"result", std::move(decision)},
          {"success", true},
          {"errors", Json::array()},
          {"messages", Json::array()}};
}

double neurons_for(std::size_t request_bytes) {
  const double tokens = static_cast<double>(request_bytes / 4);
  return tokens * 0.09 / 1e6 / (0.011 / 1000.0);
}

std::optional<std::pair<std::string, std::string>> neurons_header(MockProfile shape,
                                                                  std::size_t request_bytes) {
  if (shape != MockProfile::workers_ai) return std::nullopt;
  const double neurons = neurons_for(request_bytes);
  char text[32];
  std::snprintf(text, sizeof text, "%.5f", neurons);
  return std::make_pair(std::string("cf-ai-neurons"), std::string(text));
}

std::optional<std::pair<std::string, std::string>> request_id_header(MockProfile shape, int call) {
  if (shape == MockProfile::typesafe || shape == MockProfile::ollaya) {
    return std::make_pair(std::string("x-typesafe-request-id"), "req_" + std::to_string(call));
  }
  if (shape == MockProfile::workers_ai) {
    return std::make_pair(std::string("cf-ai-req-id"), "cf-" + std::to_string(call) + "-5e3f0c1a");
  }
  if (shape == MockProfile::openai) {
    return std::make_pair(std::string("x-request-id"), "req_" + std::to_string(call) + "a7c3");
  }
  return std::nullopt;
}

std::string ollama_name(const std::string& name) {
  return name.find(':') == std::string::npos ? name + ":latest" : name;
}

bool same_model(MockProfile shape, const std::string& a, const std::string& b) {
  if (shape != MockProfile::ollama) return a == b;
  return ollama_name(a) == ollama_name(b);
}

}  // namespace clef::mock_detail

namespace clef {

const char* cassette_tag(MockProfile profile) noexcept {
  switch (profile) {
    case MockProfile::ollama:
      return to_string(Backend::ollama);
    case MockProfile::workers_ai:
      return to_string(Backend::workers_ai);
    case MockProfile::openai:
      return to_string(Backend::openai);
    default:
      return to_string(Backend::systemone);
  }
}

}  // namespace clef
