// clef: can a model's answers be trusted — probes that need no labels: the same question with its
// options listed in other orders (position bias), and the same request sent again
// (self-consistency). `clef eval --permute N` and `--repeat K` are built on these.
//
//     clef::Question team = clef::Question::choice("team", "Which team?", {{"billing", "Money"},
//                                                                           {"technical", "Bugs"}});
//     auto orders = clef::option_orders(team, 2);  // {billing, technical}, {technical, billing}
//     clef::Question swapped = clef::with_option_order(team, orders[1]);
//     // ... decide each item with `team` and with `swapped`, then:
//     std::vector<std::vector<const clef::Answer*>> answers = {{nullptr}, {nullptr}};
//     clef::PositionProbe probe = clef::probe_positions(team, {"\"t1\""}, orders, answers);
//     bool unbiased = probe.flip_rate && probe.flip_rate->value <= 0.05;  // nothing compared: false
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clef/decision.hpp"
#include "clef/export.hpp"
#include "clef/metrics.hpp"
#include "clef/question.hpp"

namespace clef {

/// An item whose winner was not the same in every order (or every repeat).
struct ProbeFlip {
  std::string id;
  std::vector<std::string> winners;  ///< The winner in each order (or repeat), in sending order.
};

/// One question's answers with its options in `orders` (the first as asked), over the items
/// answered (a value: ok or abstained) in every order. nullopt figures: nothing compared.
struct PositionProbe {
  std::size_t orders = 0;
  std::size_t compared = 0;
  /// Items whose winner is not the same in every order, / compared, with its Wilson interval.
  std::optional<metrics::Interval> flip_rate;
  /// [i]: of every (item, order) answer compared, the share whose winner was listed at position
  /// i (0 = first). An unbiased model's shares follow where the right answers were listed; a
  /// model biased toward the first option shows a large [0].
  std::vector<double> winner_share;
  /// The mean over compared items and the orders after the first of |p_j(w) − p_0(w)|: w is the
  /// winner in the order as asked, p_j the probability order j gave it.
  std::optional<double> mean_abs_delta_p;
  std::vector<ProbeFlip> flips;  ///< In item order.
};

/// One question's answers to the same request sent `repeats` times, over the items answered
/// every time.
struct RepeatProbe {
  std::size_t repeats = 0;
  std::size_t compared = 0;
  /// Items whose winner is the same in every repeat, / compared, with its Wilson interval.
  std::optional<metrics::Interval> self_agreement;
  /// The mean over compared items of the spread (largest − smallest) of the probability each
  /// repeat gave the first repeat's winner (yes/no: of P(true)).
  std::optional<double> mean_spread;
  std::vector<ProbeFlip> flips;  ///< Items whose winner changed, in item order.
};

/// How many different orders a question's options have: n! for a choice's or a score's n
/// options (saturating), 1 for other types.
CLEF_API std::size_t distinct_orders(const Question& question);

/// `count` different orders of a choice's options or a score's levels (labels), the first as
/// asked; fewer when the question has fewer (distinct_orders). Order j (1 ≤ j < number of
/// options) is the asked order rotated j places, so that with as many orders as options each is
/// listed first exactly once; orders past that are shuffles drawn from `seed` (Fisher–Yates on a
/// 64-bit Mersenne Twister: the same on every platform), none sent twice. One order for other
/// question types, and for a question with fewer than two options.
CLEF_API std::vector<std::vector<std::string>> option_orders(const Question& question,
                                                             std::size_t count,
                                                             std::uint64_t seed = 1);

/// `question` with its options (a choice) or levels (a score, each with its description) in
/// `order` (labels, as option_orders gives them). Unchanged when `order` is not a permutation of
/// its labels, or for other types.
CLEF_API Question with_option_order(const Question& question,
                                    const std::vector<std::string>& order);

/// The probe: ids[i] names item i; answers[j][i] is item i's answer when the options were sent in
/// orders[j] (nullptr = none).
CLEF_API PositionProbe probe_positions(const Question& question,
                                       const std::vector<std::string>& ids,
                                       const std::vector<std::vector<std::string>>& orders,
                                       const std::vector<std::vector<const Answer*>>& answers);

/// The probe: answers[r][i] is item i's answer in repeat r (nullptr = none).
CLEF_API RepeatProbe probe_repeats(const Question& question, const std::vector<std::string>& ids,
                                   const std::vector<std::vector<const Answer*>>& answers);

}  // namespace clef
