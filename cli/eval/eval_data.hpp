// clef eval's DATA: the labelled items (ids and gold labels) read and checked before anything
// is sent.
#pragma once

#include <string>
#include <vector>

#include "batch/batch_command.hpp"
#include "batch/batch_input.hpp"
#include "clef/eval_report.hpp"
#include "clef/result.hpp"

namespace clef::cli {

/// An invalid_input error about clef eval's flags or files (exit 2), naming `where`.
Error usage_error(const std::string& message, const std::string& where);

/// One --label QUESTION=FIELD.
struct LabelFlag {
  std::string question;
  std::string field;
};

/// The --label flags: each QUESTION=FIELD, no question twice, at least one.
Result<std::vector<LabelFlag>> parse_labels(const std::vector<std::string>& flags);

/// Reads DATA (run.input, in `format`) into the labelled set of the `labels` questions among
/// `asked`: each item's id key (id_key) and gold labels (clef::gold_label). Every row must be
/// readable, every id unique and every gold a valid answer: a report over a broken dataset
/// would be wrong without saying so.
Result<LabelledSet> read_labelled_set(const BatchFlags& run, InputFormat format,
                                      const std::vector<Question>& asked,
                                      const std::vector<LabelFlag>& labels);

}  // namespace clef::cli
