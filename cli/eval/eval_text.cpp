// The implementation of eval_text.hpp: clef eval's report for people.
#include "eval/eval_text.hpp"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "eval/eval_report.hpp"

#include "common/context.hpp"
#include "common/number_text.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::json;

using ansi::bold;
using ansi::dim;
using ansi::reset;

std::optional<double> num(const Json& object, const char* key) {
  return report_number(object, key);
}

std::string pct(const std::optional<double>& value) {
  return value ? fixed(100 * *value, 1) + "%" : std::string(undefined_text);
}

/// "85.9% [75.4–92.4]", or "n/a" for an undefined rate.
std::string rate(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_object()) return undefined_text;
  const auto value = num(*it, "value"), low = num(*it, "low"), high = num(*it, "high");
  if (!value || !low || !high) return undefined_text;
  return pct(value) + " [" + fixed(100 * *low, 1) + "–" + fixed(100 * *high, 1) + "]";
}

std::string bar(const std::optional<double>& fraction, std::size_t width) {
  const auto filled =
      static_cast<std::size_t>(fraction.value_or(0) * static_cast<double>(width) + 0.5);
  std::string out;
  for (std::size_t i = 0; i < width; ++i) out += i < filled ? "█" : "░";
  return out;
}

std::string type_name(const Json& question) {
  const std::string type = question.value("type", "");
  return type == "noul" ? "yes/no" : type;
}

/// The line of type-specific numbers: AUROC for yes/no, MAE/within-1/RPS for scores.
std::string extras(const Json& q) {
  const std::string type = q.value("type", "");
  if (type == "noul") return "  AUROC " + fixed(num(q, "auroc"), 3);
  if (type == "score") {
    return "  MAE " + fixed(num(q, "mae"), 2) + "  within-1 " + pct(num(q, "within_1")) + "  RPS " +
           fixed(num(q, "rps"), 3);
  }
  return "";
}

/// "ECE 0.054 (noise ~0.12)"; the floor means nothing without an ECE.
std::string ece(const Json& q, bool color) {
  const auto value = num(q, "ece");
  if (!value) return std::string("ECE ") + undefined_text;
  return "ECE " + fixed(value, 3) + (color ? dim : "") + " (noise ~" +
         fixed(num(q, "ece_noise_floor"), 2) + ")" + (color ? reset : "");
}

/// The Markdown table's "ECE (noise)" cell.
std::string ece_cell(const Json& q) {
  const auto value = num(q, "ece");
  if (!value) return undefined_text;
  return fixed(value, 3) + " (" + fixed(num(q, "ece_noise_floor"), 2) + ")";
}

/// "0.5 ms", or "n/a" when no request was timed.
std::string milliseconds(const std::optional<double>& value) {
  return value ? fixed(*value, 1) + " ms" : std::string(undefined_text);
}

/// "-15.2 pts [-25.8, -4.5]": a comparison's accuracy difference.
std::string points(const ComparisonRow& row) {
  if (!row.difference || !row.low || !row.high) return undefined_text;
  return fixed(100 * *row.difference, 1) + " pts [" + fixed(100 * *row.low, 1) + ", " +
         fixed(100 * *row.high, 1) + "]";
}

/// Text from the user's files (labels, question and model names, error messages) as Markdown
/// that renders as itself: every ASCII punctuation character is backslash-escaped, which
/// CommonMark defines as that character, literally (so `<img …>`, `|`, backticks, `[x](y)`,
/// `*`, `&lt;` stay text); line breaks and other control characters become spaces, which would
/// end a table row.
std::string markdown_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f)
      out += ' ';
    else if (byte < 0x80 && std::ispunct(byte))
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out;
}

}  // namespace

void print_eval_summary(std::ostream& out, const Json& report, bool color) {
  for (const std::string& name : model_order(report)) {
    const Json& model = report["models"][name];
    const Json& latency = model["latency_ms"];
    out << (color ? bold : "") << terminal_safe(name) << (color ? reset : "") << "  "
        << report.value("items", 0) << " items · latency p50 " << milliseconds(num(latency, "p50"))
        << ", p95 " << milliseconds(num(latency, "p95")) << " · "
        << model["tokens"].value("input", 0) << " input tokens\n";
    for (const auto& [question, q] : model["questions"].items()) {
      out << "  " << (color ? bold : "") << terminal_safe(question) << (color ? reset : "") << " ("
          << type_name(q) << ")  n " << q.value("n", 0) << "  coverage " << pct(num(q, "coverage"))
          << "  accuracy " << rate(q, "accuracy") << "  macro-F1 " << fixed(num(q, "macro_f1"), 3)
          << "  Brier " << fixed(num(q, "brier"), 3) << "  " << ece(q, color) << extras(q) << "\n";
      std::size_t width = 0;
      for (const auto& [label, scores] : q["classes"].items())
        width = std::max(width, label.size());
      for (const auto& [label, scores] : q["classes"].items()) {
        out << "    " << padded(terminal_safe(label), width) << "  " << bar(num(scores, "f1"), 20)
            << " F1 " << fixed(num(scores, "f1"), 2) << "  P " << fixed(num(scores, "precision"), 2)
            << "  R " << fixed(num(scores, "recall"), 2) << "  n " << scores.value("support", 0)
            << "\n";
      }
      if (model.contains("thresholds")) {
        const Json& t = model["thresholds"]["questions"][question];
        out << "    threshold for precision ≥ "
            << fixed(num(model["thresholds"], "target_precision"), 2) << ": "
            << (t["threshold"].is_number() ? fixed(t["threshold"].get<double>(), 3)
                                           : std::string("none reaches it"))
            << "  (coverage " << pct(num(t["fit"], "coverage")) << " fit, "
            << pct(num(t["check"], "coverage")) << " check; precision "
            << fixed(num(t["check"], "precision"), 3) << " on the check half)\n";
      }
    }
  }
  std::string pair;
  for (const auto& row : comparison_rows(report)) {
    if (pair != row.a + " vs " + row.b) {
      pair = row.a + " vs " + row.b;
      out << (color ? bold : "") << terminal_safe(pair) << (color ? reset : "") << "\n";
    }
    out << "  " << padded(terminal_safe(row.question), 10) << " accuracy difference " << points(row)
        << "  McNemar p " << fixed(row.mcnemar_p, 4) << "  flips " << pct(row.flip_rate) << "  ("
        << row.only_a_right << " only " << terminal_safe(row.a) << ", " << row.only_b_right
        << " only " << terminal_safe(row.b) << ")\n";
  }
}

std::string report_markdown(const Json& report) {
  std::ostringstream out;
  out << "## clef eval\n\n"
      << report.value("items", 0) << " items · dataset `"
      << report.value("dataset_sha256", "").substr(0, 12) << "` · questions `"
      << report.value("questions_sha256", "").substr(0, 12) << "`\n\n";
  out << "| model | question | type | n | coverage | accuracy (95% CI) | macro-F1 | Brier | ECE "
         "(noise) | more |\n|---|---|---|---:|---:|---|---:|---:|---:|---|\n";
  for (const std::string& name : model_order(report)) {
    const Json& model = report["models"][name];
    for (const auto& [question, q] : model["questions"].items()) {
      out << "| " << markdown_text(name) << " | " << markdown_text(question) << " | "
          << type_name(q) << " | " << q.value("n", 0) << " | " << pct(num(q, "coverage")) << " | "
          << rate(q, "accuracy") << " | " << fixed(num(q, "macro_f1"), 3) << " | "
          << fixed(num(q, "brier"), 3) << " | " << ece_cell(q) << " | " << extras(q) << " |\n";
    }
  }
  out << "\n### Per label\n\n| model | question | label | F1 | precision | recall | support |\n"
         "|---|---|---|---:|---:|---:|---:|\n";
  for (const std::string& name : model_order(report)) {
    const Json& model = report["models"][name];
    for (const auto& [question, q] : model["questions"].items()) {
      for (const auto& [label, s] : q["classes"].items()) {
        out << "| " << markdown_text(name) << " | " << markdown_text(question) << " | "
            << markdown_text(label) << " | " << fixed(num(s, "f1"), 3) << " | "
            << rate(s, "precision") << " | " << rate(s, "recall") << " | " << s.value("support", 0)
            << " |\n";
      }
    }
  }
  const auto rows = comparison_rows(report);
  if (!rows.empty()) {
    out << "\n### Comparison\n\n| A | B | question | accuracy A − B (95% CI) | McNemar p | flip "
           "rate |\n|---|---|---|---|---:|---:|\n";
  }
  for (const auto& row : rows) {
    out << "| " << markdown_text(row.a) << " | " << markdown_text(row.b) << " | "
        << markdown_text(row.question) << " | " << points(row) << " | " << fixed(row.mcnemar_p, 4)
        << " | " << pct(row.flip_rate) << " |\n";
  }
  bool heading = false;
  for (const std::string& name : model_order(report)) {
    const std::string failures = failure_summary(report["models"][name]);
    if (failures.empty()) continue;
    if (!heading) out << "\n### Failed requests\n\n";
    heading = true;
    out << "- " << markdown_text(name) << ": " << markdown_text(failures) << "\n";
  }
  return out.str();
}

}  // namespace clef::cli
