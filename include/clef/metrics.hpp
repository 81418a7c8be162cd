// clef: the plain functions an evaluation is made of — rates with their intervals, per-label
// scores, proper scores, calibration, ranking and the paired test between two models.
//
// Each is a pure function of its arguments, so a C++ application can gate itself on the same
// numbers `clef eval` prints. A metric whose denominator is zero (a rate of no items, a mean of
// an empty sample, AUROC with one class) is undefined: std::nullopt, never a number that could
// pass a gate.
//
//     std::optional<clef::metrics::Interval> accuracy = clef::metrics::wilson(87, 100);
//     bool good_enough = accuracy && accuracy->low >= 0.8;  // no items: not good enough
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clef/export.hpp"

namespace clef::metrics {

/// A rate or a mean with its 95% interval, over n > 0 items.
struct Interval {
  double value = 0;
  double low = 0;
  double high = 0;
  std::size_t n = 0;
};

/// The z of a two-sided 95% interval, and of a one-sided 95% bound.
inline constexpr double z_95_two_sided = 1.959963984540054;
inline constexpr double z_95_one_sided = 1.6448536269514722;

/// `successes` of `n` with the Wilson score interval (two-sided, z = z_95_two_sided); nullopt when
/// n is 0.
CLEF_API std::optional<Interval> wilson(std::size_t successes, std::size_t n,
                                        double z = z_95_two_sided);
/// The one-sided 95% Wilson lower bound: precision "at least this" with 95% confidence; nullopt
/// when n is 0.
CLEF_API std::optional<double> wilson_lower_bound(std::size_t successes, std::size_t n,
                                                  double z = z_95_one_sided);

/// Counts of (gold, predicted) pairs; an unanswered item is predicted as "" and counts against
/// its gold label.
class CLEF_API Confusion {
 public:
  void add(const std::string& gold, const std::string& predicted);
  std::size_t count(const std::string& gold, const std::string& predicted) const;
  std::size_t total() const noexcept { return m_total; }
  /// gold → predicted → count.
  const std::map<std::string, std::map<std::string, std::size_t>>& counts() const noexcept {
    return m_counts;
  }
  /// Every label seen as gold or as a prediction (not ""), sorted.
  std::vector<std::string> labels() const;

 private:
  std::map<std::string, std::map<std::string, std::size_t>> m_counts;
  std::size_t m_total = 0;
};

struct ClassScores {
  std::optional<double> precision;  ///< correct / predicted; nullopt when never predicted.
  std::optional<double> recall;     ///< correct / support; nullopt when never gold.
  /// The harmonic mean of precision and recall, an undefined one counting as 0 (scikit-learn's
  /// zero_division=0); that is 2·correct / (support + predicted), defined for every label of
  /// Confusion::labels().
  double f1 = 0;
  std::size_t support = 0;    ///< Items whose gold is this label.
  std::size_t predicted = 0;  ///< Items predicted as this label.
  std::size_t correct = 0;
};

/// Per label, over Confusion::labels().
CLEF_API std::map<std::string, ClassScores> class_scores(const Confusion& confusion);
/// The unweighted mean F1 over the union of gold and predicted labels; nullopt with no labels.
CLEF_API std::optional<double> macro_f1(const Confusion& confusion);

/// Multi-class Brier score of one item: Σₖ (pₖ − yₖ)², y the one-hot gold. In [0, 2].
CLEF_API double brier(const std::vector<double>& probabilities, std::size_t gold);
/// Binary Brier score of one item: (p − y)².
CLEF_API double brier_binary(double p_true, bool gold);
/// −ln max(p_gold, 1e−15).
CLEF_API double log_loss(double p_gold);

/// Ranked probability score of one item on an ordered scale of K ≥ 2 levels:
/// 1/(K−1) · Σ_{k<K−1} (Pₖ − Oₖ)², P and O the cumulative predicted and observed distributions.
/// 0 for a certain correct answer, 1 for a certain answer at the far end of the scale.
CLEF_API double ranked_probability_score(const std::vector<double>& probabilities,
                                         std::size_t gold);

/// One equal-width bin of winner confidence, for a reliability table.
struct CalibrationBin {
  double low = 0;
  double high = 0;
  std::size_t n = 0;
  std::optional<double> mean_confidence;  ///< nullopt in an empty bin
  std::optional<double> accuracy;         ///< nullopt in an empty bin
};

/// Expected calibration error over `bins` equal-width bins of `confidence` in [0, 1]:
/// Σ_b n_b/n · |accuracy_b − mean confidence_b|; nullopt with no items. A confidence of exactly 1
/// falls in the last bin. `table`, when given, receives every bin (empty ones too).
CLEF_API std::optional<double> expected_calibration_error(
    const std::vector<double>& confidence, const std::vector<bool>& correct, std::size_t bins = 15,
    std::vector<CalibrationBin>* table = nullptr);

/// Area under the ROC curve of `scores` for the positives in `positive` (Mann–Whitney U / n₊n₋,
/// ties counting one half); nullopt when either class is empty (scikit-learn refuses that too).
CLEF_API std::optional<double> auroc(const std::vector<double>& scores,
                                     const std::vector<bool>& positive);

/// McNemar's exact test, two-sided: the items only model A got right (`only_a`) against those
/// only model B got right (`only_b`), under Binomial(only_a + only_b, 1/2). 1 when both are 0:
/// no discordant item is no evidence of a difference.
CLEF_API double mcnemar_exact_p(std::size_t only_a, std::size_t only_b);

/// The q-quantile (q in [0, 1]) of `values` with linear interpolation between order statistics
/// (numpy's default); nullopt for an empty sample.
CLEF_API std::optional<double> quantile(std::vector<double> values, double q);

/// The mean of `values` with a percentile bootstrap 95% interval over `resamples` resamples of
/// the items, from a fixed `seed` so the same input gives the same interval; nullopt for an
/// empty sample.
CLEF_API std::optional<Interval> bootstrap_mean(const std::vector<double>& values,
                                                std::size_t resamples = 2000,
                                                std::uint64_t seed = 0x5eed);

}  // namespace clef::metrics
