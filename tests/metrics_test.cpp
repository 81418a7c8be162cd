// The evaluation metrics against values computed independently: scikit-learn 1.2.1 and SciPy
// 1.10.1 (Debian bookworm's python3-sklearn, python3-scipy) where they have the metric, by hand
// (shown in the comments) where they do not.
#include <gtest/gtest.h>

#include <cmath>

#include "clef/metrics.hpp"

namespace {

namespace m = clef::metrics;

TEST(Metrics, WilsonMatchesScipy) {
  // scipy.stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
  struct Case {
    std::size_t k, n;
    double low, high;
  };
  for (const Case& c :
       {Case{87, 100, 0.790196485599, 0.922428325728}, Case{0, 10, 0.0, 0.277532799863},
        Case{10, 10, 0.722467200137, 1.0}, Case{45, 50, 0.786397685625, 0.956524235068}}) {
    ASSERT_TRUE(m::wilson(c.k, c.n));
    const m::Interval i = *m::wilson(c.k, c.n);
    EXPECT_NEAR(i.low, c.low, 1e-9) << c.k << "/" << c.n;
    EXPECT_NEAR(i.high, c.high, 1e-9) << c.k << "/" << c.n;
    EXPECT_DOUBLE_EQ(i.value, static_cast<double>(c.k) / static_cast<double>(c.n));
  }
  // One-sided 95% lower bound = the lower end of the two-sided 90% interval (SciPy, 0.90).
  EXPECT_NEAR(*m::wilson_lower_bound(45, 50), 0.808462485848, 1e-9);
}

TEST(Metrics, ClassScoresAndMacroF1MatchScikitLearn) {
  // precision_recall_fscore_support(gold, pred, labels=sorted(union), zero_division=0); an
  // unanswered item is predicted "" and counts against its gold label's recall.
  const std::vector<std::string> gold = {"billing", "billing",   "technical", "other",
                                         "billing", "technical", "other",     "technical"};
  const std::vector<std::string> pred = {"billing", "technical", "technical", "",
                                         "billing", "billing",   "other",     "technical"};
  m::Confusion confusion;
  for (std::size_t i = 0; i < gold.size(); ++i) confusion.add(gold[i], pred[i]);
  EXPECT_EQ(confusion.labels(), (std::vector<std::string>{"billing", "other", "technical"}));
  const auto scores = m::class_scores(confusion);
  EXPECT_NEAR(*scores.at("billing").precision, 2.0 / 3, 1e-12);
  EXPECT_NEAR(*scores.at("billing").recall, 2.0 / 3, 1e-12);
  EXPECT_NEAR(*scores.at("other").precision, 1.0, 1e-12);
  EXPECT_NEAR(*scores.at("other").recall, 0.5, 1e-12);
  EXPECT_NEAR(scores.at("other").f1, 2.0 / 3, 1e-12);
  EXPECT_EQ(scores.at("technical").support, 3u);
  EXPECT_EQ(scores.at("other").support, 2u);
  EXPECT_NEAR(*m::macro_f1(confusion), 0.66666666666666663, 1e-12);
  EXPECT_EQ(confusion.count("other", ""), 1u);
}

TEST(Metrics, MacroF1EdgeCases) {
  m::Confusion all_right, all_wrong, never_predicted;
  for (const char* label : {"a", "b", "a"}) all_right.add(label, label);
  EXPECT_DOUBLE_EQ(*m::macro_f1(all_right), 1.0);
  all_wrong.add("a", "b");
  all_wrong.add("b", "a");
  EXPECT_DOUBLE_EQ(*m::macro_f1(all_wrong), 0.0);
  // A label predicted but never gold is in the union: its F1 of 0 pulls the mean down.
  // scikit-learn, f1_score(["a","a"], ["a","c"], labels=["a","c"], average="macro") = 1/3.
  never_predicted.add("a", "a");
  never_predicted.add("a", "c");
  const auto scores = m::class_scores(never_predicted);
  EXPECT_EQ(scores.at("c").support, 0u);
  // Recall of a label never gold is 0/0: undefined (scikit-learn warns and, with
  // zero_division=0, scores it 0 inside F1, as here).
  EXPECT_FALSE(scores.at("c").recall);
  EXPECT_DOUBLE_EQ(*scores.at("c").precision, 0.0);
  EXPECT_DOUBLE_EQ(scores.at("c").f1, 0.0);
  EXPECT_NEAR(*m::macro_f1(never_predicted), 1.0 / 3, 1e-12);
  EXPECT_FALSE(m::macro_f1(m::Confusion{}));
}

TEST(Metrics, ProperScoresByHand) {
  // Σ (p − y)²: gold 0 → 0.3² + 0.2² + 0.1² = 0.14; gold 2 → 0.7² + 0.2² + 0.9² = 1.34.
  EXPECT_NEAR(m::brier({0.7, 0.2, 0.1}, 0), 0.14, 1e-12);
  EXPECT_NEAR(m::brier({0.7, 0.2, 0.1}, 2), 1.34, 1e-12);
  EXPECT_NEAR(m::brier({1.0, 0.0}, 1), 2.0, 1e-12);  // certain and wrong: the maximum
  EXPECT_NEAR(m::brier_binary(0.8, true), 0.04, 1e-12);
  EXPECT_NEAR(m::brier_binary(0.8, false), 0.64, 1e-12);
  EXPECT_NEAR(m::log_loss(0.5), std::log(2.0), 1e-12);
  EXPECT_NEAR(m::log_loss(0.0), 34.538776394910684, 1e-9);  // −ln 1e−15
  EXPECT_DOUBLE_EQ(m::log_loss(1.0), 0.0);
}

TEST(Metrics, RankedProbabilityScoreByHand) {
  // P = (0.1, 0.3) cumulative; gold 2 → O = (0, 0): (0.01 + 0.09)/2 = 0.05.
  EXPECT_NEAR(m::ranked_probability_score({0.1, 0.2, 0.7}, 2), 0.05, 1e-12);
  // gold 0 → O = (1, 1): (0.81 + 0.49)/2 = 0.65.
  EXPECT_NEAR(m::ranked_probability_score({0.1, 0.2, 0.7}, 0), 0.65, 1e-12);
  EXPECT_NEAR(m::ranked_probability_score({1.0, 0.0, 0.0}, 2), 1.0, 1e-12);
  EXPECT_NEAR(m::ranked_probability_score({0.0, 0.0, 1.0}, 2), 0.0, 1e-12);
}

TEST(Metrics, ExpectedCalibrationErrorByHand) {
  // Two items at 0.95 (one right) in bin 14 and two at 0.55 (both right) in bin 8:
  // ½·|0.5 − 0.95| + ½·|1 − 0.55| = 0.45.
  std::vector<m::CalibrationBin> table;
  EXPECT_NEAR(*m::expected_calibration_error({0.95, 0.95, 0.55, 0.55}, {true, false, true, true},
                                             15, &table),
              0.45, 1e-12);
  ASSERT_EQ(table.size(), 15u);
  EXPECT_EQ(table[14].n, 2u);
  EXPECT_EQ(table[8].n, 2u);
  EXPECT_NEAR(*table[14].accuracy, 0.5, 1e-12);
  EXPECT_NEAR(*table[14].mean_confidence, 0.95, 1e-12);
  EXPECT_FALSE(table[0].accuracy) << "an empty bin has no accuracy";
  EXPECT_FALSE(table[0].mean_confidence);
  // A confidence of exactly 1 is in the last bin; perfect calibration gives 0.
  EXPECT_NEAR(*m::expected_calibration_error({1.0, 1.0}, {true, true}), 0.0, 1e-12);
}

TEST(Metrics, AurocMatchesScikitLearnWithTies) {
  // roc_auc_score([1,0,1,1,0,0,1,0], [0.9,0.1,0.6,0.6,0.6,0.3,0.8,0.2]) = 0.9375
  EXPECT_NEAR(*m::auroc({0.9, 0.1, 0.6, 0.6, 0.6, 0.3, 0.8, 0.2},
                        {true, false, true, true, false, false, true, false}),
              0.9375, 1e-12);
  EXPECT_DOUBLE_EQ(*m::auroc({0.1, 0.9}, {false, true}), 1.0);
  EXPECT_DOUBLE_EQ(*m::auroc({0.1, 0.9}, {true, false}), 0.0);
  EXPECT_DOUBLE_EQ(*m::auroc({0.4, 0.4}, {true, false}), 0.5);
}

TEST(Metrics, McNemarExactMatchesScipy) {
  // scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue
  EXPECT_NEAR(m::mcnemar_exact_p(3, 10), 0.09228515625, 1e-12);
  EXPECT_NEAR(m::mcnemar_exact_p(10, 3), 0.09228515625, 1e-12);
  EXPECT_NEAR(m::mcnemar_exact_p(0, 5), 0.0625, 1e-12);
  EXPECT_DOUBLE_EQ(m::mcnemar_exact_p(7, 7), 1.0);
  EXPECT_DOUBLE_EQ(m::mcnemar_exact_p(1, 0), 1.0);
  EXPECT_DOUBLE_EQ(m::mcnemar_exact_p(0, 0), 1.0);
  EXPECT_LT(m::mcnemar_exact_p(0, 2000), 1e-300 + 1e-12);  // no overflow at large n
}

TEST(Metrics, QuantileMatchesNumpy) {
  // numpy.quantile([5,1,3,2,4], 0.95) = 4.8; quantile([10,20], 0.5) = 15; percentile(1..4, 25)
  EXPECT_NEAR(*m::quantile({5, 1, 3, 2, 4}, 0.95), 4.8, 1e-12);
  EXPECT_NEAR(*m::quantile({10, 20}, 0.5), 15.0, 1e-12);
  EXPECT_NEAR(*m::quantile({1, 2, 3, 4}, 0.25), 1.75, 1e-12);
}

TEST(Metrics, BootstrapIsDeterministicAndBracketsTheMean) {
  std::vector<double> coin(100, 0.0);
  for (std::size_t i = 0; i < 50; ++i) coin[i] = 1.0;
  const m::Interval a = m::bootstrap_mean(coin).value();
  const m::Interval b = m::bootstrap_mean(coin).value();
  EXPECT_DOUBLE_EQ(a.low, b.low);  // same seed, same interval
  EXPECT_DOUBLE_EQ(a.value, 0.5);
  // For a mean of 100 fair coins the normal approximation gives 0.5 ± 0.098.
  EXPECT_NEAR(a.low, 0.40, 0.02);
  EXPECT_NEAR(a.high, 0.60, 0.02);
  const m::Interval constant = m::bootstrap_mean({0.3, 0.3, 0.3}).value();
  EXPECT_DOUBLE_EQ(constant.low, 0.3);
  EXPECT_DOUBLE_EQ(constant.high, 0.3);
}

TEST(Metrics, ZeroDenominatorsAreUndefinedNotZero) {
  // Before, each of these was a number: 0 (a perfect Brier, ECE or latency), 0.5 (AUROC) or an
  // interval [0, 0]; a gate read them as measured. SciPy's binomtest and scikit-learn's
  // roc_auc_score refuse these inputs outright.
  EXPECT_FALSE(m::wilson(0, 0));
  EXPECT_FALSE(m::wilson_lower_bound(0, 0));
  EXPECT_FALSE(m::bootstrap_mean({}));
  EXPECT_FALSE(m::quantile({}, 0.95));
  EXPECT_FALSE(m::expected_calibration_error({}, {}));
  EXPECT_FALSE(m::auroc({}, {}));
  EXPECT_FALSE(m::auroc({0.4, 0.7}, {true, true}));  // one class: no pair to rank
  EXPECT_FALSE(m::auroc({0.4, 0.7}, {false, false}));
  m::Confusion unanswered;
  unanswered.add("a", "");
  const auto scores = m::class_scores(unanswered);
  EXPECT_FALSE(scores.at("a").precision) << "never predicted";
  EXPECT_DOUBLE_EQ(*scores.at("a").recall, 0.0);
  EXPECT_DOUBLE_EQ(*m::macro_f1(unanswered), 0.0);
}

}  // namespace
