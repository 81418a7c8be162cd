#include "mock_answers.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "json_text.hpp"

namespace clef::mock_detail {

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// SplitMix64.
double unit_draw(std::uint64_t seed, int call, std::uint64_t stream) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + (static_cast<std::uint64_t>(call) << 1) + stream;
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0;
}

namespace {

/// Deterministic "model": a logit per (state, question, option).
double logit(const std::string& state, const std::string& question, const std::string& option) {
  return static_cast<double>(fnv1a(state + "\x1f" + question + "\x1f" + option) % 1000) / 160.0;
}

std::vector<double> softmax(const std::vector<double>& logits) {
  const double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p;
  double sum = 0;
  for (double l : logits) sum += std::exp(l - top);
  for (double l : logits) p.push_back(std::exp(l - top) / sum);
  return p;
}

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

/// A probability as each server's JSON encoder writes it: Go and JS print 1 and 0 as integers.
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

/// Published observations for the Clef-Flash card's ticket (vectors.md TV-3): clef-flash:9b on a
/// local Ollama gave billing 0.9764 / technical 0.0128 / other 0.0109 for the team question, and
/// the Ollama decision guide reports a refund probability of 0.9989. The fake replays them.
constexpr const char* card_ticket = "I was charged twice. Please refund the extra payment.";

std::optional<std::vector<double>> recorded_choice(const std::string& state,
                                                   const std::vector<std::string>& keys) {
  if (state.find(card_ticket) == std::string::npos) return std::nullopt;
  if (keys != std::vector<std::string>{"billing", "technical", "other"}) return std::nullopt;
  return std::vector<double>{0.9764, 0.0128, 0.0109};
}

/// A rule's answer as a distribution over `keys`: the named key gets the rule's probability and
/// the others share the rest equally. Nullopt when the rule names no key.
std::optional<std::vector<double>> ruled(const MockRule& rule, const std::vector<std::string>& keys,
                                         const std::vector<std::string>& legend) {
  std::size_t at = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == rule.answer || (i < legend.size() && legend[i] == rule.answer)) at = i;
  }
  if (at == keys.size() || keys.size() < 2) return std::nullopt;
  std::vector<double> p(keys.size(),
                        (1.0 - rule.probability) / static_cast<double>(keys.size() - 1));
  p[at] = rule.probability;
  return p;
}

}  // namespace

Json answer_for(MockProfile shape, const std::string& state, const std::string& name,
                const Json& question, const MockRule* rule) {
  const std::string type = detail::string_field(question, "type");
  Json answer = {{"type", type}};
  if (type == "noul") {
    double p = 1.0 / (1.0 + std::exp(-(logit(state, name, "true") * 2.0 - 4.0)));
    if (state.find(card_ticket) != std::string::npos && name == "refund") p = 0.9989;
    if (rule && (rule->answer == "yes" || rule->answer == "true")) p = rule->probability;
    if (rule && (rule->answer == "no" || rule->answer == "false")) p = 1.0 - rule->probability;
    answer["noul"] = number_as_sent(shape, p);
    return answer;
  }
  std::vector<std::string> keys;
  std::vector<std::string> legend;
  if (type == "choice") {
    for (const auto& item : question["criteria"].items()) keys.push_back(item.key());
  } else {
    for (std::size_t i = 0; i < question["criteria"].size(); ++i) {
      keys.push_back(std::to_string(i));
      legend.push_back(question["criteria"][i].is_string()
                           ? question["criteria"][i].get<std::string>()
                           : question["criteria"][i].dump());
    }
  }
  std::vector<double> logits;
  for (const auto& key : keys) logits.push_back(logit(state, name, key));
  std::optional<std::vector<double>> forced = rule ? ruled(*rule, keys, legend) : std::nullopt;
  if (!forced) forced = recorded_choice(state, keys);
  const std::vector<double> p = forced.value_or(softmax(logits));
  const std::size_t best = std::max_element(p.begin(), p.end()) - p.begin();
  const double confidence = uses_entropy(shape) ? entropy_confidence(p) : max_confidence(p);
  if (type == "choice") {
    answer["choice"] = keys[best];
    if (shape == MockProfile::ollaya) answer["confidence"] = number_as_sent(shape, confidence);
    answer["probabilities"] = probabilities_object(shape, keys, p);
    if (shape != MockProfile::ollaya) answer["confidence"] = number_as_sent(shape, confidence);
    return answer;
  }
  double expected = 0;
  for (std::size_t i = 0; i < p.size(); ++i) expected += static_cast<double>(i) * p[i];
  answer["score"] = number_as_sent(shape, expected);
  if (shape != MockProfile::ollama && shape != MockProfile::laya) {
    Json l = Json::object();
    for (std::size_t i = 0; i < legend.size(); ++i) l[std::to_string(i)] = legend[i];
    answer["legend"] = l;
  }
  answer["probabilities"] = probabilities_object(shape, keys, p);
  answer["confidence"] = number_as_sent(shape, confidence);
  return answer;
}

}  // namespace clef::mock_detail
