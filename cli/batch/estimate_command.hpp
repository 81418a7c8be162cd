// Internal to `clef batch --estimate`: what the run would cost, from a seeded sample of its
// items decided now (clef/estimate.hpp), said before anything else is sent.
#pragma once

#include <vector>

#include "batch/batch_command.hpp"
#include "batch/batch_input.hpp"
#include "clef/question.hpp"
#include "common/context.hpp"

namespace clef::cli {

/// Reads the whole input (this shard's share with --shard), decides --sample items of it and
/// prints the estimate: a JSON object on stdout, a sentence on stderr. Writes no OUTPUT.
/// Exit 0; 2 when no sampled cost is known (naming the --price it needs); the first failure's
/// code when every sampled item failed; 130 when interrupted.
int run_estimate(const BatchFlags& flags, const std::vector<Question>& questions,
                 InputFormat format, const Context& context);

}  // namespace clef::cli
