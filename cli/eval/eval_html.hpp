// clef eval's HTML report: one self-contained page (no scripts, no network) whose charts are
// inline SVG — per-label F1 bars, the confusion matrix and the reliability diagram.
#pragma once

#include <string>

#include "clef/eval_report.hpp"

namespace clef::cli {

std::string report_html(const EvalReport& report);

}  // namespace clef::cli
