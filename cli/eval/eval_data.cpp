// The implementation of eval_data.hpp: clef eval's labelled items.
#include "eval/eval_data.hpp"

#include <algorithm>
#include <iostream>
#include <unordered_set>

#include "batch/batch_output.hpp"
#include "clef/eval.hpp"
#include "common/files.hpp"
#include "common/input_file.hpp"

namespace clef::cli {
namespace {

/// A field no item has is a typo in --label more often than a question nobody labelled: every
/// item skipped would score nothing, and exit 0 without a gate.
Status check_every_label_is_there(const LabelledSet& data, const std::vector<LabelFlag>& labels,
                                  const std::string& input) {
  for (std::size_t q = 0; q < labels.size(); ++q) {
    const bool any = std::any_of(data.items.begin(), data.items.end(),
                                 [&](const LabelledItem& item) { return !item.gold[q].empty(); });
    if (!any) {
      return usage_error("no item has a gold answer in the field \"" + labels[q].field +
                             "\" (--label " + labels[q].question + "=" + labels[q].field +
                             "): nothing to score that question against",
                         input);
    }
  }
  return {};
}

}  // namespace

Error usage_error(const std::string& message, const std::string& where) {
  return make_error(ErrorKind::invalid_input, message, where);
}

Result<std::vector<LabelFlag>> parse_labels(const std::vector<std::string>& flags) {
  std::vector<LabelFlag> out;
  for (const auto& flag : flags) {
    const auto equals = flag.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == flag.size()) {
      return usage_error("\"" + flag + "\": write --label QUESTION=FIELD", "--label");
    }
    for (const auto& seen : out) {
      if (seen.question == flag.substr(0, equals)) {
        return usage_error("question \"" + seen.question + "\" is labelled twice", "--label");
      }
    }
    out.push_back({flag.substr(0, equals), flag.substr(equals + 1)});
  }
  if (out.empty()) {
    return usage_error(
        "nothing to score: give --label QUESTION=FIELD for each question whose "
        "gold answer is in DATA",
        "--label");
  }
  return out;
}

Result<LabelledSet> read_labelled_set(const BatchFlags& run, InputFormat format,
                                      const std::vector<Question>& asked,
                                      const std::vector<LabelFlag>& labels) {
  LabelledSet data;
  InputFields fields{run.id_field, run.state_field, run.state_columns, {}, {}};
  for (const auto& label : labels) {
    const Question* question = nullptr;
    for (const auto& q : asked)
      if (q.name == label.question) question = &q;
    if (!question) {
      return usage_error("\"" + label.question + "\" is not one of the questions", "--label");
    }
    data.questions.push_back(*question);
    fields.extra.push_back(label.field);
  }
  if (run.input == "-" || path_kind(run.input) == PathKind::stream) {
    return usage_error(
        "clef eval reads DATA once for its labels and once for each model: give "
        "a file, not a pipe, FIFO or device",
        run.input);
  }
  auto file = InputFile::open(run.input, "the data", std::cin, nullptr);
  if (!file) return file.error();
  auto reader = make_reader(file->stream(), format, fields);
  if (!reader) {
    Error error = reader.error();
    error.where = run.input + ": " + error.where;
    return error;
  }
  std::unordered_set<std::string> seen;
  while (auto item = reader.value()->next()) {
    const std::string where = run.input + ": line " + std::to_string(item->line);
    if (!item->state) {
      Error error = item->state.error();
      error.where = run.input + ": " + error.where;
      return error;
    }
    LabelledItem entry{id_key(item->id), {}};
    if (!seen.insert(entry.id).second) {
      return usage_error("the id " + entry.id + " is used twice: each item needs its own id",
                         where);
    }
    for (std::size_t q = 0; q < labels.size(); ++q) {
      auto gold = gold_label(data.questions[q], item->extra[q]);
      if (!gold) return usage_error(gold.error().message, where + ", " + labels[q].field);
      entry.gold.push_back(std::move(gold).value());
    }
    data.items.push_back(std::move(entry));
  }
  if (auto failure = file->failure()) return failure.value();
  if (data.items.empty()) return usage_error("the data has no items", run.input);
  if (auto status = check_every_label_is_there(data, labels, run.input); !status)
    return status.error();
  data.dataset_sha256 = file->sha256_of_what_was_read().value_or("");
  auto questions = questions_sha256(asked);
  if (!questions) return questions.error();
  data.questions_sha256 = questions.value();
  return data;
}

}  // namespace clef::cli
