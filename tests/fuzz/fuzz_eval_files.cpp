// libFuzzer: the files clef reads back — a policy, a `clef batch` results file, a baseline report,
// a --replay cassette — and the --require and --tolerance parsers, all on the same bytes. Nothing
// may crash; a policy that parses must write and read back the same.
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "batch/batch_results.hpp"
#include "clef/cassette.hpp"
#include "clef/eval_gates.hpp"
#include "clef/eval_report.hpp"
#include "clef/json.hpp"
#include "clef/policy.hpp"

namespace {

const std::vector<clef::Question>& questions() {
  static const std::vector<clef::Question> asked = {
      clef::Question::choice("team", "Which team?", {{"billing", "Money"}, {"technical", "Bugs"}}),
      clef::Question::yes_no("refund", "Money back?"),
      clef::Question::score("urgency", "How urgent?", {"Routine", "Soon", "Urgent"})};
  return asked;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto policy = clef::Policy::parse(text, "fuzz");
  if (policy) {
    const std::string once = policy->to_json();
    auto again = clef::Policy::parse(once, "again");
    if (!again || again->to_json() != once) __builtin_trap();
  }
  std::istringstream in(text);
  auto results = clef::cli::read_batch_results("-", questions(), in, nullptr);
  if (results && policy) {
    for (auto& [key, record] : results.value()) {
      if (record.decision) policy->apply(*record.decision);
    }
  }
  // The results, whatever they hold, as a model's answers on a labelled set.
  auto parsed = clef::parse_json(text, "fuzz");
  const auto text_at = [&](const char* key) {
    if (!parsed || !parsed->is_object()) return std::string();
    const auto it = parsed->find(key);
    return it != parsed->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  clef::LabelledSet set;
  set.questions = questions();
  set.dataset_sha256 = text_at("dataset_sha256");
  set.questions_sha256 = text_at("questions_sha256");
  clef::ModelResults run{"fuzz", {}, {}, {}};
  if (results) {
    static const char* const teams[] = {"billing", "technical"};
    static const char* const levels[] = {"Routine", "Soon", "Urgent"};
    for (auto& [key, record] : results.value()) {
      const std::size_t i = set.items.size();
      set.items.push_back({key, {teams[i % 2], i % 3 ? "yes" : "no", levels[i % 3]}});
      run.items.emplace_back(std::move(record));
    }
  }
  const clef::EvalReport report = clef::evaluate_models(set, {run}, {true, 0.9});
  // As its own baseline a report compares every defined metric with itself: no drop.
  const nlohmann::ordered_json own(clef::to_json(report));
  auto self = clef::EvalBaseline::from_json(own, set.dataset_sha256, set.questions_sha256);
  if (!self) __builtin_trap();
  auto same = clef::compare_to_baseline(report, self.value(), {});
  if (same && !same->drops.empty()) __builtin_trap();
  // The bytes as a baseline report: refused or compared, never a crash.
  if (parsed) {
    auto baseline =
        clef::EvalBaseline::from_json(parsed.value(), set.dataset_sha256, set.questions_sha256);
    if (baseline) (void)clef::compare_to_baseline(report, baseline.value(), {});
  }
  for (const char* gate : {"team.accuracy >= 0.5", "lower(team.precision[billing]) > 0.1",
                           "refund.auroc < 1", "latency_ms.p95 < 100", "overall.all_correct > 0"}) {
    auto requirement = clef::parse_requirement(gate);
    if (!requirement) __builtin_trap();
    (void)clef::failed_requirements({requirement.value()}, report);
  }
  // The same bytes as a cassette file: replay must read or refuse it, never crash.
  static const std::string cassette = "/tmp/clef-fuzz-cassette-" + std::to_string(::getpid());
  if (FILE* file = std::fopen(cassette.c_str(), "wb")) {
    std::fwrite(text.data(), 1, text.size(), file);
    std::fclose(file);
    auto replay = clef::make_replay_transport(cassette, "ollama");
    if (replay) {
      clef::HttpRequest request;
      request.url = "http://127.0.0.1/v1/systemone";
      request.body = text;
      (void)replay.value()->send(request);
    }
  }
  (void)clef::parse_requirement(text);
  (void)clef::parse_tolerances({text});
  return 0;
}
