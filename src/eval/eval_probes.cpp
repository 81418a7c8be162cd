// The implementation of eval_probes.hpp.
#include "eval/eval_probes.hpp"

#include "eval/report_json.hpp"

namespace clef::detail {
namespace {

/// Item i's answer to `question` in one pass, or nullptr.
const Answer* answer_in(const std::vector<std::optional<ItemResult>>& items, std::size_t i,
                        const std::string& question) {
  if (i >= items.size() || !items[i] || !items[i]->decision) return nullptr;
  return items[i]->decision->answer(question);
}

std::vector<const Answer*> pass_answers(const std::vector<std::optional<ItemResult>>& items,
                                        std::size_t count, const std::string& question) {
  std::vector<const Answer*> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(answer_in(items, i, question));
  return out;
}

SortedJson flips_json(const std::vector<ProbeFlip>& flips) {
  SortedJson out = SortedJson::array();
  for (const auto& flip : flips)
    out.push_back({{"id", id_json(flip.id)}, {"winners", flip.winners}});
  return out;
}

}  // namespace

void add_probes(const LabelledSet& set, const ModelResults& run, std::size_t q,
                const std::vector<std::string>& ids, QuestionEvaluation& evaluation) {
  const Question& question = set.questions[q];
  const std::size_t count = set.items.size();
  const bool ordered =
      question.type == QuestionType::choice || question.type == QuestionType::score;
  if (!run.permuted.empty() && ordered) {
    std::vector<std::vector<std::string>> orders = {option_orders(question, 1).front()};
    std::vector<std::vector<const Answer*>> answers = {
        pass_answers(run.items, count, question.name)};
    for (const ProbeRun& pass : run.permuted) {
      // A pass that sent this question as asked (it has fewer orders than passes) adds nothing.
      if (q >= pass.option_orders.size() || pass.option_orders[q].empty()) continue;
      orders.push_back(pass.option_orders[q]);
      answers.push_back(pass_answers(pass.items, count, question.name));
    }
    evaluation.position = probe_positions(question, ids, orders, answers);
  }
  if (!run.repeated.empty() && question.type != QuestionType::box) {
    std::vector<std::vector<const Answer*>> answers = {
        pass_answers(run.items, count, question.name)};
    for (const ProbeRun& pass : run.repeated)
      answers.push_back(pass_answers(pass.items, count, question.name));
    evaluation.repeat = probe_repeats(question, ids, answers);
  }
}

void add_probe_json(const QuestionEvaluation& e, SortedJson& out) {
  if (e.position) {
    out["position_orders"] = e.position->orders;
    out["position_compared"] = e.position->compared;
    out["position_flip_rate"] = interval_json(e.position->flip_rate);
    out["position_winner_share"] = e.position->winner_share;
    out["position_mean_abs_delta_p"] = number_json(e.position->mean_abs_delta_p);
    out["position_flips"] = flips_json(e.position->flips);
  }
  if (e.repeat) {
    out["repeats"] = e.repeat->repeats;
    out["repeat_compared"] = e.repeat->compared;
    out["self_agreement"] = interval_json(e.repeat->self_agreement);
    out["repeat_mean_spread"] = number_json(e.repeat->mean_spread);
    out["repeat_flips"] = flips_json(e.repeat->flips);
  }
}

}  // namespace clef::detail
