// The implementation of batch_results.hpp: a `clef batch` output read back (clef eval's --answers
// and --from-results).
#include "batch_results.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "batch_input.hpp"
#include "batch_output.hpp"
#include "clef/json.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

std::optional<double> probability_at(const Json& object, const std::string& key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double p = it->get<double>();
  if (!(p >= 0 && p <= 1)) return std::nullopt;
  return p;
}

double number_or(const Json& object, const char* key, double fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string string_or(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Answer invalid(Answer answer, std::string problem) {
  answer.status = AnswerStatus::invalid;
  answer.problem = std::move(problem);
  answer.value = std::monostate();
  return answer;
}

/// Probabilities in the question's order, from the "probabilities" object under `keys`.
std::optional<std::vector<double>> probabilities(const Json& answer,
                                                 const std::vector<std::string>& keys) {
  const auto it = answer.find("probabilities");
  if (it == answer.end() || !it->is_object()) return std::nullopt;
  std::vector<double> out;
  for (const auto& key : keys) {
    auto p = probability_at(*it, key);
    if (!p) return std::nullopt;
    out.push_back(*p);
  }
  return out;
}

Answer answer_from(const Question& question, const Json& json) {
  Answer answer;
  answer.question = question.name;
  answer.asked = question.type;
  if (!json.is_object()) return invalid(answer, "the answer is not an object");
  const std::string status = string_or(json, "status");
  if (status != "ok" && status != "abstained") {
    answer.status = status == "refused"      ? AnswerStatus::refused
                    : status == "wrong_type" ? AnswerStatus::wrong_type
                    : status == "missing"    ? AnswerStatus::missing
                                             : AnswerStatus::invalid;
    answer.problem = string_or(json, "problem");
    return answer;
  }
  answer.status = status == "ok" ? AnswerStatus::ok : AnswerStatus::abstained;
  if (string_or(json, "type") != to_string(question.type)) {
    return invalid(answer, "the answer's type is not the question's");
  }
  const double confidence = number_or(json, "confidence", 0);
  if (question.type == QuestionType::yes_no) {
    auto p = probability_at(json, "p_true");
    if (!p) return invalid(answer, "no p_true in [0, 1]");
    YesNoAnswer noul;
    noul.p_true = *p;
    const std::string winner = string_or(json, "winner");
    noul.verdict =
        winner == "yes" ? Verdict::yes
        : winner == "no"
            ? Verdict::no
            : (winner == "unknown" ? Verdict::unknown : (*p >= 0.5 ? Verdict::yes : Verdict::no));
    noul.confidence = confidence;
    answer.value = noul;
    return answer;
  }
  std::vector<std::string> keys;
  if (question.type == QuestionType::choice) {
    for (const auto& option : question.options) keys.push_back(option.label);
  } else {
    for (std::size_t i = 0; i < question.levels.size(); ++i) keys.push_back(std::to_string(i));
  }
  auto p = probabilities(json, keys);
  if (!p || p->empty()) return invalid(answer, "probabilities missing or outside [0, 1]");
  // The winner is the first most likely option, as the client picks it.
  const std::size_t best =
      static_cast<std::size_t>(std::max_element(p->begin(), p->end()) - p->begin());
  if (question.type == QuestionType::choice) {
    ChoiceAnswer choice;
    choice.choice = keys[best];
    choice.probability = (*p)[best];
    for (std::size_t i = 0; i < keys.size(); ++i)
      choice.probabilities.push_back({keys[i], (*p)[i]});
    choice.confidence = confidence;
    answer.value = std::move(choice);
    return answer;
  }
  ScoreAnswer score;
  score.probabilities = *p;
  score.most_likely_level = static_cast<int>(best);
  score.most_likely_label = question.levels[best];
  score.labels = question.levels;
  for (std::size_t i = 0; i < p->size(); ++i) score.score += static_cast<double>(i) * (*p)[i];
  score.confidence = confidence;
  answer.value = std::move(score);
  return answer;
}

Decision decision_from(const Json& line, const std::vector<Question>& questions) {
  Decision decision;
  decision.model = string_or(line, "model");
  decision.request_id = string_or(line, "request_id");
  const auto usage = line.find("usage");
  if (usage != line.end() && usage->is_object()) {
    decision.usage.input_tokens = static_cast<std::int64_t>(number_or(*usage, "input_tokens", 0));
    decision.usage.output_tokens = static_cast<std::int64_t>(number_or(*usage, "output_tokens", 0));
  }
  const auto answers = line.find("answers");
  for (const auto& question : questions) {
    const Json* json = nullptr;
    if (answers != line.end() && answers->is_object()) {
      const auto it = answers->find(question.name);
      if (it != answers->end()) json = &*it;
    }
    if (json) {
      decision.answers.push_back(answer_from(question, *json));
    } else {
      Answer missing;
      missing.question = question.name;
      missing.asked = question.type;
      missing.problem = "the results have no answer for this question";
      decision.answers.push_back(std::move(missing));
    }
  }
  return decision;
}

/// Whether `incoming` should replace `held` for the same id.
bool replaces(const ResultRecord& held, const ResultRecord& incoming) {
  return incoming.decision.has_value() || !held.decision.has_value();
}

}  // namespace

Result<BatchResults> read_batch_results(const std::string& path,
                                        const std::vector<Question>& questions, std::istream& in) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return make_error(ErrorKind::invalid_input, "cannot open the results", path);
  }
  std::istream& stream = path == "-" ? in : file;
  BatchResults results;
  std::vector<std::pair<std::string, std::string>> copies;  // id, duplicate_of
  Line input;
  const std::string& text = input.text;
  for (std::size_t number = 1; read_line(stream, input, max_input_line); ++number) {
    const std::string where = path + ": line " + std::to_string(number);
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (input.too_long) return make_error(ErrorKind::invalid_input, "the line is too long", where);
    auto parsed = parse_json(text, "the results line");
    if (!parsed || !parsed->is_object()) {
      return make_error(ErrorKind::invalid_input,
                        "not a `clef batch` result line (a JSON object with an id)", where);
    }
    const Json& line = parsed.value();
    const auto id = line.find("id");
    if (id == line.end() || !(id->is_string() || id->is_number())) continue;  // unreadable input
    const std::string key = id_key(*id);
    const auto copy_of = line.find("duplicate_of");
    if (copy_of != line.end() && !line.contains("answers") && !line.contains("error")) {
      copies.emplace_back(key, id_key(*copy_of));
      continue;
    }
    ResultRecord record;
    const auto error = line.find("error");
    if (error != line.end()) {
      record.error = error->is_object() ? string_or(*error, "message") : "failed";
      if (record.error.empty()) record.error = "failed";
      if (error->is_object()) record.error_kind = string_or(*error, "kind");
    } else {
      record.decision = decision_from(line, questions);
      record.latency_ms = number_or(line, "latency_ms", 0);
      record.sent = copy_of == line.end();
    }
    auto held = results.find(key);
    if (held == results.end())
      results.emplace(key, std::move(record));
    else if (replaces(held->second, record))
      held->second = std::move(record);
  }
  for (const auto& [key, first] : copies) {
    const auto source = results.find(first);
    if (source == results.end() || results.count(key)) continue;
    ResultRecord copy = source->second;
    copy.latency_ms = 0;
    copy.sent = false;
    results.emplace(key, std::move(copy));
  }
  return results;
}

}  // namespace clef::cli
