// The implementation of clef/metrics.hpp: the plain functions an evaluation is made of — rates with
// their intervals, per-label scores, proper scores, calibration, ranking and the paired test
// between two models.
#include "clef/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

namespace clef::metrics {
namespace {

double ratio(std::size_t a, std::size_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

/// ln C(n, k), exact enough for the binomial tail at any n a dataset has.
double log_choose(std::size_t n, std::size_t k) {
  return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
         std::lgamma(static_cast<double>(n - k) + 1);
}

}  // namespace

std::optional<Interval> wilson(std::size_t successes, std::size_t n, double z) {
  if (n == 0) return std::nullopt;
  Interval out;
  out.n = n;
  const double nn = static_cast<double>(n);
  const double p = ratio(successes, n);
  const double z2 = z * z;
  const double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  const double half = z / (1 + z2 / nn) * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  out.value = p;
  out.low = std::max(0.0, centre - half);
  out.high = std::min(1.0, centre + half);
  return out;
}

std::optional<double> wilson_lower_bound(std::size_t successes, std::size_t n, double z) {
  const auto interval = wilson(successes, n, z);
  return interval ? std::optional<double>(interval->low) : std::nullopt;
}

void Confusion::add(const std::string& gold, const std::string& predicted) {
  ++m_counts[gold][predicted];
  ++m_total;
}

std::size_t Confusion::count(const std::string& gold, const std::string& predicted) const {
  auto row = m_counts.find(gold);
  if (row == m_counts.end()) return 0;
  auto cell = row->second.find(predicted);
  return cell == row->second.end() ? 0 : cell->second;
}

std::vector<std::string> Confusion::labels() const {
  std::set<std::string> labels;
  for (const auto& [gold, row] : m_counts) {
    if (!gold.empty()) labels.insert(gold);
    for (const auto& [predicted, count] : row) {
      if (!predicted.empty() && count > 0) labels.insert(predicted);
    }
  }
  return {labels.begin(), labels.end()};
}

std::map<std::string, ClassScores> class_scores(const Confusion& confusion) {
  std::map<std::string, ClassScores> scores;
  for (const auto& label : confusion.labels()) scores[label];
  for (const auto& [gold, row] : confusion.counts()) {
    for (const auto& [predicted, count] : row) {
      if (!gold.empty()) scores[gold].support += count;
      if (!predicted.empty()) scores[predicted].predicted += count;
      if (gold == predicted && !gold.empty()) scores[gold].correct += count;
    }
  }
  for (auto& [label, s] : scores) {
    if (s.predicted > 0) s.precision = ratio(s.correct, s.predicted);
    if (s.support > 0) s.recall = ratio(s.correct, s.support);
    const double p = s.precision.value_or(0), r = s.recall.value_or(0);
    s.f1 = p + r > 0 ? 2 * p * r / (p + r) : 0;
  }
  return scores;
}

std::optional<double> macro_f1(const Confusion& confusion) {
  const auto scores = class_scores(confusion);
  if (scores.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& [label, s] : scores) sum += s.f1;
  return sum / static_cast<double>(scores.size());
}

double brier(const std::vector<double>& probabilities, std::size_t gold) {
  double sum = 0;
  for (std::size_t k = 0; k < probabilities.size(); ++k) {
    const double y = k == gold ? 1.0 : 0.0;
    sum += (probabilities[k] - y) * (probabilities[k] - y);
  }
  return sum;
}

double brier_binary(double p_true, bool gold) {
  const double y = gold ? 1.0 : 0.0;
  return (p_true - y) * (p_true - y);
}

double log_loss(double p_gold) {
  return -std::log(std::max(p_gold, 1e-15));
}

double ranked_probability_score(const std::vector<double>& probabilities, std::size_t gold) {
  const std::size_t levels = probabilities.size();
  if (levels < 2) return 0;
  double predicted = 0;
  double sum = 0;
  for (std::size_t k = 0; k + 1 < levels; ++k) {
    predicted += probabilities[k];
    const double observed = k >= gold ? 1.0 : 0.0;
    sum += (predicted - observed) * (predicted - observed);
  }
  return sum / static_cast<double>(levels - 1);
}

std::optional<double> expected_calibration_error(const std::vector<double>& confidence,
                                                 const std::vector<bool>& correct, std::size_t bins,
                                                 std::vector<CalibrationBin>* table) {
  bins = std::max<std::size_t>(bins, 1);
  std::vector<CalibrationBin> out(bins);
  std::vector<double> confidence_sum(bins, 0.0);
  std::vector<std::size_t> correct_count(bins, 0);
  const std::size_t n = std::min(confidence.size(), correct.size());
  for (std::size_t b = 0; b < bins; ++b) {
    out[b].low = static_cast<double>(b) / static_cast<double>(bins);
    out[b].high = static_cast<double>(b + 1) / static_cast<double>(bins);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double c = std::clamp(confidence[i], 0.0, 1.0);
    const auto b = std::min(bins - 1, static_cast<std::size_t>(c * static_cast<double>(bins)));
    ++out[b].n;
    confidence_sum[b] += c;
    correct_count[b] += correct[i] ? 1 : 0;
  }
  double ece = 0;
  for (std::size_t b = 0; b < bins; ++b) {
    if (out[b].n == 0) continue;
    const double mean_confidence = confidence_sum[b] / static_cast<double>(out[b].n);
    const double accuracy = ratio(correct_count[b], out[b].n);
    out[b].mean_confidence = mean_confidence;
    out[b].accuracy = accuracy;
    ece += ratio(out[b].n, n) * std::fabs(accuracy - mean_confidence);
  }
  if (table) *table = std::move(out);
  if (n == 0) return std::nullopt;
  return ece;
}

std::optional<double> auroc(const std::vector<double>& scores, const std::vector<bool>& positive) {
  const std::size_t n = std::min(scores.size(), positive.size());
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  // Mid-ranks over ties, then the Mann–Whitney U of the positives.
  double positive_rank_sum = 0;
  std::size_t positives = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) {
      if (positive[order[k]]) {
        positive_rank_sum += mid_rank;
        ++positives;
      }
    }
    i = j;
  }
  const std::size_t negatives = n - positives;
  if (positives == 0 || negatives == 0) return std::nullopt;
  const double p = static_cast<double>(positives);
  const double u = positive_rank_sum - p * (p + 1) / 2.0;
  return u / (p * static_cast<double>(negatives));
}

double mcnemar_exact_p(std::size_t only_a, std::size_t only_b) {
  const std::size_t n = only_a + only_b;
  if (n == 0) return 1.0;
  const std::size_t k = std::min(only_a, only_b);
  // Two-sided: twice the lower tail P(X ≤ k), X ~ Binomial(n, 1/2), capped at 1.
  double tail = 0;
  for (std::size_t i = 0; i <= k; ++i) {
    tail += std::exp(log_choose(n, i) - static_cast<double>(n) * std::log(2.0));
  }
  return std::min(1.0, 2.0 * tail);
}

std::optional<double> quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const auto above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + (values[above] - values[below]) * fraction;
}

std::optional<Interval> bootstrap_mean(const std::vector<double>& values, std::size_t resamples,
                                       std::uint64_t seed) {
  if (values.empty()) return std::nullopt;
  Interval out;
  out.n = values.size();
  const double n = static_cast<double>(values.size());
  out.value = std::accumulate(values.begin(), values.end(), 0.0) / n;
  // mt19937_64 and a modulo draw: the same sequence with every standard library, so a report
  // is byte-for-byte the same everywhere (uniform_int_distribution is not specified exactly).
  std::mt19937_64 random(seed);
  std::vector<double> means;
  means.reserve(resamples);
  for (std::size_t r = 0; r < resamples; ++r) {
    double sum = 0;
    for (std::size_t i = 0; i < values.size(); ++i) sum += values[random() % values.size()];
    means.push_back(sum / n);
  }
  // With no resamples the interval is the mean itself.
  out.low = quantile(means, 0.025).value_or(out.value);
  out.high = quantile(means, 0.975).value_or(out.value);
  return out;
}

}  // namespace clef::metrics
