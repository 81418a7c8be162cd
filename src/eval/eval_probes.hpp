// Internal: clef eval's probes (--permute, --repeat) in its report — each question's
// PositionProbe and RepeatProbe from a model's extra passes, and their JSON form.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "clef/eval_report.hpp"

namespace clef::detail {

/// Sets `evaluation`'s probes for the set's question q from `run`'s extra passes: a position
/// probe when the options were sent in other orders (a choice or a score), a repeat probe when
/// requests were sent again. `ids` name the set's items.
void add_probes(const LabelledSet& set, const ModelResults& run, std::size_t q,
                const std::vector<std::string>& ids, QuestionEvaluation& evaluation);

/// The probes' keys in a question's clef-eval/1 object (none when no probe ran): position_orders,
/// position_flip_rate, position_winner_share, position_mean_abs_delta_p, position_flips; repeats,
/// self_agreement, repeat_mean_spread, repeat_flips.
void add_probe_json(const QuestionEvaluation& evaluation, nlohmann::json& out);

}  // namespace clef::detail
