// libFuzzer: the files clef reads back — a policy, a `clef batch` results file, a baseline report,
// a --replay cassette — and the --require and --tolerance parsers, all on the same bytes. Nothing
// may crash; a policy that parses must write and read back the same.
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>

#include "batch/batch_results.hpp"
#include "clef/cassette.hpp"
#include "clef/json.hpp"
#include "clef/policy.hpp"
#include "eval/eval_gates.hpp"

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
  auto results = clef::cli::read_batch_results("-", questions(), in);
  if (results && policy) {
    for (auto& [key, record] : results.value()) {
      if (record.decision) policy->apply(*record.decision);
    }
  }
  auto parsed = clef::parse_json(text, "fuzz");
  if (parsed) {
    const auto report = nlohmann::json::parse(parsed->dump(), nullptr, false);
    // json::value() throws on a field of another type: read the digests as strings only.
    const auto text_at = [&](const char* key) {
      const auto it = report.is_object() ? report.find(key) : report.end();
      return it != report.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string dataset = text_at("dataset_sha256");
    const std::string asked = text_at("questions_sha256");
    (void)clef::cli::check_baseline(report, dataset, asked);
    // As its own baseline a report compares every defined metric with itself: no drop.
    auto same = clef::cli::compare_to_baseline(report, report, {});
    if (same && !same->drops.empty()) __builtin_trap();
    for (const char* gate :
         {"team.accuracy >= 0.5", "lower(team.precision[billing]) > 0.1", "refund.auroc < 1",
          "latency_ms.p95 < 100", "overall.all_correct > 0"}) {
      auto requirement = clef::cli::parse_requirement(gate);
      if (!requirement) __builtin_trap();
      (void)clef::cli::failed_requirements({requirement.value()}, report);
    }
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
  (void)clef::cli::parse_requirement(text);
  (void)clef::cli::parse_tolerances({text});
  return 0;
}
