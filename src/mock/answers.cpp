// The simulated model: a deterministic answer per (state, question, option), from a rule, a
// published observation or a hash, in the shape of the profile's server.
#include "mock/answers.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "mock/faults.hpp"
#include "mock/profile.hpp"
#include "model/box_answer.hpp"
#include "util/ascii.hpp"
#include "util/json_text.hpp"

namespace clef::mock_detail {

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
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

/// A rule that matched but answers none of its question's options (a typo in a test's rules
/// file, which cannot be checked when the file is read: the questions come with each request)
/// is said once on stderr; the mock's own answer is given, as before.
void say_the_rule_answers_no_option(const MockRule& rule, const std::string& question,
                                    const std::vector<std::string>& options) {
  // Never destroyed: connection threads may still answer while the process exits.
  static auto* const mutex = new std::mutex;
  static auto* const said = new std::set<std::pair<std::string, std::string>>;
  std::lock_guard<std::mutex> lock(*mutex);
  if (said->size() >= 100 || !said->emplace(question, rule.answer).second) return;
  std::string listed;
  for (const auto& option : options) listed += (listed.empty() ? "" : ", ") + option;
  std::cerr << detail::controls_shown("clef mock: warning: a rule for question \"" + question +
                                      "\" answers \"" + rule.answer + "\", none of its options (" +
                                      listed + "): the mock's own answer is given instead")
            << std::endl;
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

/// A standard normal for request `call`, drawn from the seed (Box–Muller on two of its draws);
/// `stream` tells the options (and the questions) apart.
double normal_draw(const Flaws& flaws, std::uint64_t stream) {
  const double u1 = unit_draw(flaws.seed, flaws.call, 2 * stream + 2);
  const double u2 = unit_draw(flaws.seed, flaws.call, 2 * stream + 3);
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2 * 3.14159265358979323846 * u2);
}

/// `p` (in the order the options were sent) pulled toward the first option and shaken by noise.
std::vector<double> with_flaws(std::vector<double> p, const Flaws& flaws, std::uint64_t stream) {
  if (p.empty()) return p;
  if (flaws.position_bias > 0) {
    for (auto& x : p) x *= 1.0 - flaws.position_bias;
    p[0] += flaws.position_bias;
  }
  if (flaws.noise > 0) {
    double sum = 0;
    for (std::size_t k = 0; k < p.size(); ++k) {
      p[k] *= std::exp(flaws.noise * normal_draw(flaws, stream + k));
      sum += p[k];
    }
    for (auto& x : p) x /= sum;
  }
  return p;
}

/// A yes/no answer: P(true) from the logit, the card's published refund answer, or a rule.
Json noul_answer(MockProfile shape, const std::string& state, const std::string& name,
                 const MockRule* rule, const Flaws& flaws) {
  double p = 1.0 / (1.0 + std::exp(-(logit(state, name, "true") * 2.0 - 4.0)));
  if (state.find(card_ticket) != std::string::npos && name == "refund") p = 0.9989;
  if (rule && (rule->answer == "yes" || rule->answer == "true"))
    p = rule->probability;
  else if (rule && (rule->answer == "no" || rule->answer == "false"))
    p = 1.0 - rule->probability;
  else if (rule)
    say_the_rule_answers_no_option(*rule, name, {"yes", "no"});
  if (flaws.noise > 0 && p > 0 && p < 1) {
    const double log_odds =
        std::log(p / (1 - p)) + flaws.noise * normal_draw(flaws, fnv1a(state + "\n" + name));
    p = 1.0 / (1.0 + std::exp(-log_odds));
  }
  return {{"type", "noul"}, {"noul", number_as_sent(shape, p)}};
}

/// A choice's or a score's options: the keys its probabilities are sent under, and (for a
/// score) each level's label.
struct Options {
  std::vector<std::string> keys;
  std::vector<std::string> legend;
};

Options options_of(const std::string& type, const Json& question) {
  Options out;
  const Json& criteria = question["criteria"];
  if (type == "choice") {
    for (const auto& item : criteria.items()) out.keys.push_back(item.key());
    return out;
  }
  for (std::size_t i = 0; i < criteria.size(); ++i) {
    out.keys.push_back(std::to_string(i));
    out.legend.push_back(criteria[i].is_string() ? criteria[i].get<std::string>()
                                                 : criteria[i].dump());
  }
  return out;
}

/// The distribution over the options: a rule's, the card's published one, else the softmax of
/// the logits.
std::vector<double> distribution(const std::string& state, const std::string& name,
                                 const Options& options, const MockRule* rule) {
  std::vector<double> logits;
  for (const auto& key : options.keys) logits.push_back(logit(state, name, key));
  std::optional<std::vector<double>> forced =
      rule ? ruled(*rule, options.keys, options.legend) : std::nullopt;
  if (rule && !forced) say_the_rule_answers_no_option(*rule, name, options.keys);
  if (!forced) forced = recorded_choice(state, options.keys);
  return forced.value_or(softmax(logits));
}

Json choice_answer(MockProfile shape, const Options& options, const std::vector<double>& p) {
  const std::size_t best = std::max_element(p.begin(), p.end()) - p.begin();
  const Json sure = number_as_sent(shape, confidence(shape, p));
  Json answer = {{"type", "choice"}, {"choice", options.keys[best]}};
  if (shape == MockProfile::ollaya) answer["confidence"] = sure;
  answer["probabilities"] = probabilities_object(shape, options.keys, p);
  if (shape != MockProfile::ollaya) answer["confidence"] = sure;
  return answer;
}

Json score_answer(MockProfile shape, const Options& options, const std::vector<double>& p) {
  double expected = 0;
  for (std::size_t i = 0; i < p.size(); ++i) expected += static_cast<double>(i) * p[i];
  Json answer = {{"type", "score"}, {"score", number_as_sent(shape, expected)}};
  if (shape != MockProfile::ollama && shape != MockProfile::laya) {
    Json legend = Json::object();
    for (std::size_t i = 0; i < options.legend.size(); ++i) {
      legend[std::to_string(i)] = options.legend[i];
    }
    answer["legend"] = legend;
  }
  answer["probabilities"] = probabilities_object(shape, options.keys, p);
  answer["confidence"] = number_as_sent(shape, confidence(shape, p));
  return answer;
}

/// A box around where the simulated model "sees" the thing: a rule's "top,bottom,left,right"
/// with its probability as the confidence, else edges from the hash (at least 0.1 wide and
/// tall, so TypeSafe's two decimals keep top < bottom and left < right).
Json box_answer(MockProfile shape, const std::string& state, const std::string& name,
                const MockRule* rule) {
  std::string problem;
  const auto ruled_box = rule ? clef::detail::parse_box_text(rule->answer, problem) : std::nullopt;
  const double sure = ruled_box ? rule->probability : 0.5 + logit(state, name, "sure") / 14.0;
  BoxAnswer box;
  if (ruled_box) {
    box = *ruled_box;
  } else {
    const double height = 0.1 + logit(state, name, "height") / 20.0;  // logits are [0, 6.25)
    const double width = 0.1 + logit(state, name, "width") / 20.0;
    box.top = (1.0 - height) * logit(state, name, "top") / 6.25;
    box.left = (1.0 - width) * logit(state, name, "left") / 6.25;
    box.bottom = box.top + height;
    box.right = box.left + width;
  }
  return {{"type", "box"},
          {"box",
           {{"top", number_as_sent(shape, box.top)},
            {"bottom", number_as_sent(shape, box.bottom)},
            {"left", number_as_sent(shape, box.left)},
            {"right", number_as_sent(shape, box.right)}}},
          {"confidence", number_as_sent(shape, sure)}};
}

}  // namespace

Json answer_for(MockProfile shape, const std::string& state, const std::string& name,
                const Json& question, const MockRule* rule, const Flaws& flaws) {
  const std::string type = detail::string_field(question, "type");
  if (type == "noul") return noul_answer(shape, state, name, rule, flaws);
  if (type == "box") return box_answer(shape, state, name, rule);
  const Options options = options_of(type, question);
  const std::vector<double> p =
      with_flaws(distribution(state, name, options, rule), flaws, fnv1a(state + "\n" + name));
  if (type == "choice") return choice_answer(shape, options, p);
  return score_answer(shape, options, p);
}

}  // namespace clef::mock_detail
