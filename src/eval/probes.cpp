// The implementation of probes.hpp: option orders, and the position and repeat probes.
#include "clef/probes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "eval/answer_probability.hpp"

namespace clef {
namespace {

std::vector<std::string> labels_of(const Question& question) {
  std::vector<std::string> labels;
  if (question.type == QuestionType::choice) {
    for (const auto& option : question.options) labels.push_back(option.label);
  } else if (question.type == QuestionType::score) {
    labels = question.levels;
  }
  return labels;
}

/// A shuffle of `labels` from `random`: Fisher–Yates with each index drawn by rejection, so that
/// the same seed gives the same order on every platform (std::shuffle's draws are the library's).
std::vector<std::string> shuffled(std::vector<std::string> labels, std::mt19937_64& random) {
  for (std::size_t i = labels.size(); i > 1; --i) {
    const std::uint64_t bound = i;
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                std::numeric_limits<std::uint64_t>::max() % bound;
    std::uint64_t draw = random();
    while (draw >= limit) draw = random();
    std::swap(labels[i - 1], labels[static_cast<std::size_t>(draw % bound)]);
  }
  return labels;
}

std::size_t position_in(const std::vector<std::string>& order, const std::string& label) {
  return static_cast<std::size_t>(std::find(order.begin(), order.end(), label) - order.begin());
}

/// The answers item i got in every run, or an empty vector when any run has none.
std::vector<const Answer*> every_run(const std::vector<std::vector<const Answer*>>& answers,
                                     std::size_t i) {
  std::vector<const Answer*> found;
  for (const auto& run : answers) {
    const Answer* answer = detail::valued(run, i);
    if (!answer) return {};
    found.push_back(answer);
  }
  return found;
}

/// The winners of `found`, and whether they are all the same.
std::vector<std::string> winners_of(const std::vector<const Answer*>& found, bool& same) {
  std::vector<std::string> winners;
  same = true;
  for (const Answer* answer : found) {
    winners.push_back(answer->winner());
    same = same && winners.back() == winners.front();
  }
  return winners;
}

}  // namespace

std::size_t distinct_orders(const Question& question) {
  const std::size_t options = labels_of(question).size();
  std::size_t orders = 1;
  for (std::size_t k = 2; k <= options; ++k) {
    if (orders > std::numeric_limits<std::size_t>::max() / k)
      return std::numeric_limits<std::size_t>::max();
    orders *= k;
  }
  return orders;
}

std::vector<std::vector<std::string>> option_orders(const Question& question, std::size_t count,
                                                    std::uint64_t seed) {
  const std::vector<std::string> asked = labels_of(question);
  std::vector<std::vector<std::string>> orders = {asked};
  count = std::min(count, distinct_orders(question));
  std::set<std::vector<std::string>> seen = {asked};
  std::mt19937_64 random(seed);
  for (std::size_t j = 1; j < count && j < asked.size(); ++j) {
    std::vector<std::string> rotated(asked.begin() + static_cast<std::ptrdiff_t>(j), asked.end());
    rotated.insert(rotated.end(), asked.begin(), asked.begin() + static_cast<std::ptrdiff_t>(j));
    seen.insert(rotated);
    orders.push_back(std::move(rotated));
  }
  // A new shuffle each time, never one already sent; the bound only guards against a broken
  // generator (with count ≤ distinct orders, each draw is new with probability ≥ 1/count).
  for (std::size_t tries = 0; orders.size() < count && tries < 1'000'000; ++tries) {
    std::vector<std::string> order = shuffled(asked, random);
    if (seen.insert(order).second) orders.push_back(std::move(order));
  }
  return orders;
}

Question with_option_order(const Question& question, const std::vector<std::string>& order) {
  const std::vector<std::string> asked = labels_of(question);
  if (asked.size() != order.size() ||
      std::set<std::string>(asked.begin(), asked.end()) !=
          std::set<std::string>(order.begin(), order.end()) ||
      std::set<std::string>(asked.begin(), asked.end()).size() != asked.size()) {
    return question;
  }
  Question out = question;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t from = position_in(asked, order[k]);
    if (question.type == QuestionType::choice) {
      out.options[k] = question.options[from];
    } else {
      out.levels[k] = question.levels[from];
      if (!question.level_descriptions.empty())
        out.level_descriptions[k] = question.level_descriptions[from];
    }
  }
  return out;
}

PositionProbe probe_positions(const Question& question, const std::vector<std::string>& ids,
                              const std::vector<std::vector<std::string>>& orders,
                              const std::vector<std::vector<const Answer*>>& answers) {
  PositionProbe probe;
  probe.orders = orders.size();
  if (question.type != QuestionType::choice && question.type != QuestionType::score) return probe;
  const std::size_t width = orders.empty() ? 0 : orders.front().size();
  std::vector<std::size_t> at_position(width, 0);
  std::size_t answers_counted = 0;
  double delta_sum = 0;
  for (std::size_t i = 0; i < ids.size() && answers.size() == orders.size(); ++i) {
    const std::vector<const Answer*> found = every_run(answers, i);
    if (found.empty()) continue;
    ++probe.compared;
    bool same = true;
    std::vector<std::string> winners = winners_of(found, same);
    for (std::size_t j = 0; j < found.size(); ++j) {
      const std::size_t position = position_in(orders[j], winners[j]);
      if (position < width) ++at_position[position];
      ++answers_counted;
      if (j == 0) continue;
      const auto first = detail::probability_of(*found[0], winners[0]);
      const auto now = detail::probability_of(*found[j], winners[0]);
      delta_sum += first && now ? std::fabs(*now - *first) : 1.0;
    }
    if (!same) probe.flips.push_back({ids[i], std::move(winners)});
  }
  if (probe.compared == 0) return probe;
  probe.flip_rate = metrics::wilson(probe.flips.size(), probe.compared);
  for (std::size_t count : at_position)
    probe.winner_share.push_back(static_cast<double>(count) / static_cast<double>(answers_counted));
  if (probe.orders > 1) {
    probe.mean_abs_delta_p = delta_sum / static_cast<double>(probe.compared * (probe.orders - 1));
  }
  return probe;
}

RepeatProbe probe_repeats(const Question& question, const std::vector<std::string>& ids,
                          const std::vector<std::vector<const Answer*>>& answers) {
  RepeatProbe probe;
  probe.repeats = answers.size();
  if (question.type == QuestionType::box) return probe;
  double spread_sum = 0;
  for (std::size_t i = 0; i < ids.size() && !answers.empty(); ++i) {
    const std::vector<const Answer*> found = every_run(answers, i);
    if (found.empty()) continue;
    ++probe.compared;
    bool same = true;
    std::vector<std::string> winners = winners_of(found, same);
    double low = 1, high = 0;
    for (const Answer* answer : found) {
      const double p = detail::probability_of(*answer, winners[0]).value_or(0.0);
      low = std::min(low, p);
      high = std::max(high, p);
    }
    spread_sum += high - low;
    if (!same) probe.flips.push_back({ids[i], std::move(winners)});
  }
  if (probe.compared == 0) return probe;
  probe.self_agreement = metrics::wilson(probe.compared - probe.flips.size(), probe.compared);
  probe.mean_spread = spread_sum / static_cast<double>(probe.compared);
  return probe;
}

}  // namespace clef
