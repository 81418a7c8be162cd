// clef eval's results, per model and typed: sent through the batch engine as they arrive (kept
// in --answers when asked, resumed from it), or read from `clef batch` output (--from-results).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <vector>

#include "clef/eval_report.hpp"
#include "common/context.hpp"
#include "eval/eval_command.hpp"

namespace clef::cli {

/// Every model's results on `set`, or, when a run stopped (the server is unreachable, the
/// quota is used up, an interrupt, --answers refused), its exit code: that run has already
/// said why on stderr.
struct EvalResults {
  std::vector<ModelResults> models;
  std::optional<int> stopped;
};

Result<EvalResults> collect_results(const EvalFlags& flags, const CLI::App& command,
                                    const std::vector<Question>& asked, InputFormat format,
                                    const LabelledSet& set, const Context& context);

}  // namespace clef::cli
