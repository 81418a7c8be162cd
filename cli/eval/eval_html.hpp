// clef eval's HTML report: one self-contained page (no scripts, no network) whose charts are
// inline SVG — per-label F1 bars, the confusion matrix and the reliability diagram.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace clef::cli {

std::string report_html(const nlohmann::json& report);

}  // namespace clef::cli
