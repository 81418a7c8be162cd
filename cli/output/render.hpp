// How a decision is printed at the terminal: for people (bars, colour) and for shell scripts.
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include "clef/decision.hpp"
#include "clef/image.hpp"
#include "clef/question.hpp"

namespace clef::cli {

/// Per question: the winner and its probability, then a bar per option, most likely first; a
/// box as its edges, drawn on a frame of `image` (the request's one image; nullopt: unknown).
void print_human(std::ostream& out, const Decision& decision,
                 const std::vector<Question>& questions, bool color,
                 std::optional<ImageSize> image = std::nullopt);
/// One JSON object per question, one per line.
void print_jsonl(std::ostream& out, const Decision& decision);
/// question, type, winner, probability, confidence, status — tab-separated with a header.
void print_tsv(std::ostream& out, const Decision& decision);
/// Only the winning labels, one per question, in question order.
void print_values(std::ostream& out, const Decision& decision);

}  // namespace clef::cli
