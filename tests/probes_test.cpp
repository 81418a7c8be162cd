// clef::option_orders, with_option_order, probe_positions and probe_repeats on small cases
// counted by hand (each expected value's arithmetic is beside it).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "clef/probes.hpp"

namespace {

using clef::Answer;
using clef::Question;
using Order = std::vector<std::string>;

const Question team = Question::choice(
    "team", "Which team?", {{"billing", "Money"}, {"technical", "Bugs"}, {"other", "Else"}});

/// A choice answer whose probabilities are listed in `order` (as the server was sent them).
Answer sent_as(const Order& order, const std::string& winner, double p) {
  Answer a;
  a.question = "team";
  a.asked = clef::QuestionType::choice;
  a.status = clef::AnswerStatus::ok;
  clef::ChoiceAnswer c;
  for (const auto& label : order)
    c.probabilities.push_back({label, label == winner ? p : (1 - p) / 2});
  c.choice = winner;
  c.probability = p;
  a.value = c;
  return a;
}

TEST(OptionOrders, RotationsFirstThenSeededShuffles) {
  const auto three = clef::option_orders(team, 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0], (Order{"billing", "technical", "other"}));  // as asked
  EXPECT_EQ(three[1], (Order{"technical", "other", "billing"}));
  EXPECT_EQ(three[2], (Order{"other", "billing", "technical"}));  // each label first once
  const auto six = clef::option_orders(team, 6, 7);
  ASSERT_EQ(six.size(), 6u);
  for (const auto& order : six) {
    Order sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (Order{"billing", "other", "technical"}));  // a permutation
  }
  EXPECT_EQ(clef::option_orders(team, 6, 7), six);  // the seed fixes the shuffles
  EXPECT_EQ(clef::option_orders(team, 1).size(), 1u);
  EXPECT_EQ(clef::option_orders(Question::yes_no("refund", "Refund?"), 4).size(), 1u);
}

TEST(OptionOrders, NeverTheSameOrderTwiceAndNoMoreThanThereAre) {
  const auto all = clef::option_orders(team, 10);
  ASSERT_EQ(all.size(), 6u);  // 3! orders, each once
  EXPECT_EQ(std::set<Order>(all.begin(), all.end()).size(), 6u);
  EXPECT_EQ(clef::distinct_orders(team), 6u);
  const Question pair = Question::choice("pair", "Which?", {{"a", "A"}, {"b", "B"}});
  EXPECT_EQ(clef::option_orders(pair, 5), (std::vector<Order>{{"a", "b"}, {"b", "a"}}));
  EXPECT_EQ(clef::distinct_orders(Question::yes_no("refund", "Refund?")), 1u);
}

TEST(OptionOrders, AQuestionKeepsEachOptionWithItsDescription) {
  const Question swapped = clef::with_option_order(team, {"other", "billing", "technical"});
  ASSERT_EQ(swapped.options.size(), 3u);
  EXPECT_EQ(swapped.options[0].label, "other");
  EXPECT_EQ(swapped.options[1].label, "billing");
  EXPECT_EQ(swapped.options[1].description, team.options[0].description);
  const Question scale = Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"});
  EXPECT_EQ(clef::with_option_order(scale, {"Urgent", "Routine", "Soon"}).levels,
            (Order{"Urgent", "Routine", "Soon"}));
  // Not a permutation of the labels: unchanged.
  EXPECT_EQ(clef::with_option_order(team, {"billing", "billing", "other"}).options[1].label,
            "technical");
  EXPECT_EQ(clef::with_option_order(team, {"billing"}).options.size(), 3u);
}

TEST(ProbePositions, CountedByHand) {
  const auto orders = clef::option_orders(team, 3);  // B T O, T O B, O B T
  // Item 1: billing in every order (no flip). Item 2: the first listed always wins — billing,
  // technical, other (a flip). Item 3: technical, technical, other (a flip). Item 4: no answer in
  // order 2 (not compared).
  const std::vector<Answer> order0 = {
      sent_as(orders[0], "billing", 0.9), sent_as(orders[0], "billing", 0.6),
      sent_as(orders[0], "technical", 0.8), sent_as(orders[0], "other", 0.9)};
  const std::vector<Answer> order1 = {sent_as(orders[1], "billing", 0.8),
                                      sent_as(orders[1], "technical", 0.6),
                                      sent_as(orders[1], "technical", 0.7), Answer{}};
  const std::vector<Answer> order2 = {
      sent_as(orders[2], "billing", 0.7), sent_as(orders[2], "other", 0.6),
      sent_as(orders[2], "other", 0.5), sent_as(orders[2], "other", 0.9)};
  auto pointers = [](const std::vector<Answer>& answers) {
    std::vector<const Answer*> out;
    for (const auto& a : answers) out.push_back(&a);
    return out;
  };
  const clef::PositionProbe probe = clef::probe_positions(
      team, {"1", "2", "3", "4"}, orders, {pointers(order0), pointers(order1), pointers(order2)});
  EXPECT_EQ(probe.orders, 3u);
  EXPECT_EQ(probe.compared, 3u);
  ASSERT_TRUE(probe.flip_rate);
  EXPECT_DOUBLE_EQ(probe.flip_rate->value, 2.0 / 3);
  ASSERT_EQ(probe.flips.size(), 2u);
  EXPECT_EQ(probe.flips[0].id, "2");
  EXPECT_EQ(probe.flips[0].winners, (Order{"billing", "technical", "other"}));
  // Where the 9 winners were listed. Item 1: billing at 0 (BTO), 2 (TOB), 1 (OBT). Item 2: 0, 0,
  // 0. Item 3: technical at 1 (BTO), 0 (TOB); other at 0 (OBT). Position 0: 1 + 3 + 2 = 6;
  // position 1: 1 + 1 = 2; position 2: 1.
  ASSERT_EQ(probe.winner_share.size(), 3u);
  EXPECT_DOUBLE_EQ(probe.winner_share[0], 6.0 / 9);
  EXPECT_DOUBLE_EQ(probe.winner_share[1], 2.0 / 9);
  EXPECT_DOUBLE_EQ(probe.winner_share[2], 1.0 / 9);
  // |p_j(w) − p_0(w)|, w the winner as asked:
  //   item 1 (billing 0.9): 0.8 → 0.1, 0.7 → 0.2;
  //   item 2 (billing 0.6): order 1 gives billing (1 − 0.6)/2 = 0.2 → 0.4; order 2 0.2 → 0.4;
  //   item 3 (technical 0.8): 0.7 → 0.1; order 2 gives technical 0.25 → 0.55.
  //   Sum 1.75 over 3 items × 2 orders: 0.291666…
  EXPECT_NEAR(probe.mean_abs_delta_p.value(), 1.75 / 6, 1e-12);
}

TEST(ProbeRepeats, CountedByHand) {
  const Order asked = {"billing", "technical", "other"};
  // Item 1: billing 0.9, 0.7, 0.8 (same winner; spread 0.2). Item 2: billing 0.5, technical 0.6
  // (billing (1 − 0.6)/2 = 0.2), billing 0.55 (a flip; billing's spread 0.55 − 0.2 = 0.35).
  const std::vector<Answer> first = {sent_as(asked, "billing", 0.9),
                                     sent_as(asked, "billing", 0.5)};
  const std::vector<Answer> second = {sent_as(asked, "billing", 0.7),
                                      sent_as(asked, "technical", 0.6)};
  const std::vector<Answer> third = {sent_as(asked, "billing", 0.8),
                                     sent_as(asked, "billing", 0.55)};
  const clef::RepeatProbe probe = clef::probe_repeats(
      team, {"1", "2"}, {{&first[0], &first[1]}, {&second[0], &second[1]}, {&third[0], &third[1]}});
  EXPECT_EQ(probe.repeats, 3u);
  EXPECT_EQ(probe.compared, 2u);
  EXPECT_DOUBLE_EQ(probe.self_agreement->value, 0.5);
  EXPECT_NEAR(probe.mean_spread.value(), (0.2 + 0.35) / 2, 1e-12);
  ASSERT_EQ(probe.flips.size(), 1u);
  EXPECT_EQ(probe.flips[0].winners, (Order{"billing", "technical", "billing"}));
  // Nothing answered every time: undefined, not perfect.
  const clef::RepeatProbe none = clef::probe_repeats(team, {"1"}, {{&first[0]}, {nullptr}});
  EXPECT_EQ(none.compared, 0u);
  EXPECT_FALSE(none.self_agreement);
}

}  // namespace
