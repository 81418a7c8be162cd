// The implementation of batch_results.hpp: a `clef batch` output read back.
#include "batch/batch_results.hpp"

#include "common/input_file.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "batch/batch_input.hpp"
#include "batch/batch_output.hpp"
#include "clef/decision_json.hpp"
#include "clef/json.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

double number_or(const Json& object, const char* key, double fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

/// Whether `incoming` should replace `held` for the same id.
bool replaces(const ItemResult& held, const ItemResult& incoming) {
  return incoming.decision.has_value() || !held.decision.has_value();
}

/// One line of a results file read: a result (an object with a string or number id); nullopt
/// for clef batch's line for an input line it could not read (its line number, no id); an
/// error for anything else.
Result<std::optional<Json>> result_line(const std::string& text, const std::string& where) {
  auto parsed = parse_json(text, "the results line");
  if (!parsed || !parsed->is_object()) {
    return make_error(ErrorKind::invalid_input,
                      "not a `clef batch` result line (a JSON object with an id)", where);
  }
  const Json& line = parsed.value();
  const auto id = line.find("id");
  if (id == line.end() || id->is_null()) {
    const auto number_of_input = line.find("line");
    if (number_of_input != line.end() && number_of_input->is_number_unsigned())
      return std::optional<Json>();
    return make_error(ErrorKind::invalid_input,
                      "not a `clef batch` result line (a JSON object with an id)", where);
  }
  if (!id->is_string() && !id->is_number()) {
    return make_error(ErrorKind::invalid_input,
                      "not a `clef batch` result line: its id is neither a string nor a number",
                      where);
  }
  return std::optional<Json>(std::move(parsed).value());
}

}  // namespace

std::optional<std::pair<std::string, ItemResult>> item_result_from_line(
    const Json& line, const std::vector<Question>& questions) {
  const auto id = line.find("id");
  if (id == line.end() || !(id->is_string() || id->is_number())) return std::nullopt;
  const auto copy_of = line.find("duplicate_of");
  if (copy_of != line.end() && !line.contains("answers") && !line.contains("error")) {
    return std::nullopt;
  }
  ItemResult record;
  const auto error = line.find("error");
  if (error != line.end()) {
    record.error = error_from_json(*error).message;
    // The kind as the file names it: a results file from another tool may use its own words.
    if (error->is_object()) {
      const auto kind = error->find("kind");
      if (kind != error->end() && kind->is_string()) record.error_kind = kind->get<std::string>();
    }
  } else {
    record.decision = decision_from_json(line, questions);
    record.latency_ms = number_or(line, "latency_ms", 0);
    record.sent = copy_of == line.end();
  }
  return std::make_pair(id_key(*id), std::move(record));
}

Result<BatchResults> read_batch_results(const std::string& path,
                                        const std::vector<Question>& questions, std::istream& in,
                                        const std::atomic<bool>* stop,
                                        std::vector<std::string>* order) {
  auto file = InputFile::open(path, "the results", in, stop);
  if (!file) return file.error();
  std::istream& stream = file->stream();
  BatchResults results;
  std::vector<std::pair<std::string, std::string>> copies;  // id, duplicate_of
  Line input;
  const std::string& text = input.text;
  // An interrupt ends a read mid-line: what was read is not to be judged, nor used.
  const auto interrupted = [&] {
    return make_error(ErrorKind::cancelled, "interrupted while reading the results", path);
  };
  for (std::size_t number = 1; read_line(stream, input, max_input_line); ++number) {
    if (stop && stop->load()) return interrupted();
    const std::string where = path + ": line " + std::to_string(number);
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (input.too_long) return make_error(ErrorKind::invalid_input, "the line is too long", where);
    auto parsed = result_line(text, where);
    if (!parsed) return parsed.error();
    if (!parsed.value()) continue;  // an input line clef batch could not read
    const Json& line = *parsed.value();
    const auto id = line.find("id");
    if (order) order->push_back(id_key(*id));
    const auto copy_of = line.find("duplicate_of");
    if (copy_of != line.end() && !line.contains("answers") && !line.contains("error")) {
      copies.emplace_back(id_key(*id), id_key(*copy_of));
      continue;
    }
    auto result = item_result_from_line(line, questions);
    if (!result) continue;
    ItemResult& record = result->second;
    auto held = results.find(result->first);
    if (held == results.end())
      results.emplace(result->first, std::move(record));
    else if (replaces(held->second, record))
      held->second = std::move(record);
  }
  for (const auto& [key, first] : copies) {
    const auto source = results.find(first);
    if (source == results.end() || results.count(key)) continue;
    ItemResult copy = source->second;
    copy.latency_ms = 0;
    copy.sent = false;
    results.emplace(key, std::move(copy));
  }
  if (stop && stop->load()) return interrupted();
  if (auto failure = file->failure()) return failure.value();
  return results;
}

}  // namespace clef::cli
