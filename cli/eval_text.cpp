#include "eval_text.hpp"

#include <cstdio>
#include <sstream>

#include "eval_report.hpp"

#include "context.hpp"
#include "number_text.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::json;

const char* const bold = "\x1b[1m";
const char* const dim = "\x1b[2m";
const char* const reset = "\x1b[0m";

double num(const Json& object, const char* key) {
  return report_number(object, key);
}

std::string pct(double value) {
  return fixed(100 * value, 1) + "%";
}

/// "85.9% [75.4–92.4]"
std::string rate(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_object()) return "-";
  return pct(it->value("value", 0.0)) + " [" + fixed(100 * it->value("low", 0.0), 1) + "–" +
         fixed(100 * it->value("high", 0.0), 1) + "]";
}

std::string bar(double fraction, std::size_t width) {
  const auto filled = static_cast<std::size_t>(fraction * static_cast<double>(width) + 0.5);
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
  if (type == "noul" && q.contains("auroc") && q["auroc"].is_number())
    return "  AUROC " + fixed(q["auroc"].get<double>(), 3);
  if (type == "score") {
    return "  MAE " + fixed(num(q, "mae"), 2) + "  within-1 " + pct(num(q, "within_1")) + "  RPS " +
           fixed(num(q, "rps"), 3);
  }
  return "";
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace

void print_eval_summary(std::ostream& out, const Json& report, bool color) {
  for (const std::string& name : model_order(report)) {
    const Json& model = report["models"][name];
    const Json& latency = model["latency_ms"];
    out << (color ? bold : "") << terminal_safe(name) << (color ? reset : "") << "  "
        << report.value("items", 0) << " items · latency p50 " << fixed(num(latency, "p50"), 1)
        << " ms, p95 " << fixed(num(latency, "p95"), 1) << " ms · "
        << model["tokens"].value("input", 0) << " input tokens\n";
    for (const auto& [question, q] : model["questions"].items()) {
      out << "  " << (color ? bold : "") << terminal_safe(question) << (color ? reset : "") << " ("
          << type_name(q) << ")  n " << q.value("n", 0) << "  coverage " << pct(num(q, "coverage"))
          << "  accuracy " << rate(q, "accuracy") << "  macro-F1 " << fixed(num(q, "macro_f1"), 3)
          << "  Brier " << fixed(num(q, "brier"), 3) << "  ECE " << fixed(num(q, "ece"), 3)
          << (color ? dim : "") << " (noise ~" << fixed(num(q, "ece_noise_floor"), 2) << ")"
          << (color ? reset : "") << extras(q) << "\n";
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
            << fixed(model["thresholds"].value("target_precision", 0.0), 2) << ": "
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
    out << "  " << padded(terminal_safe(row.question), 10) << " accuracy difference "
        << fixed(100 * row.difference, 1) << " pts [" << fixed(100 * row.low, 1) << ", "
        << fixed(100 * row.high, 1) << "]  McNemar p " << fixed(row.mcnemar_p, 4) << "  flips "
        << pct(row.flip_rate) << "  (" << row.only_a_right << " only " << terminal_safe(row.a)
        << ", " << row.only_b_right << " only " << terminal_safe(row.b) << ")\n";
  }
}

std::string report_markdown(const Json& report) {
  std::ostringstream out;
  auto cell = [](std::string text) {
    std::string safe;
    for (char c : text) {
      if (c == '|')
        safe += "\\|";
      else if (c == '\n' || c == '\r')
        safe += ' ';
      else
        safe += c;
    }
    return safe;
  };
  out << "## clef eval\n\n"
      << report.value("items", 0) << " items · dataset `"
      << report.value("dataset_sha256", "").substr(0, 12) << "` · questions `"
      << report.value("questions_sha256", "").substr(0, 12) << "`\n\n";
  out << "| model | question | type | n | coverage | accuracy (95% CI) | macro-F1 | Brier | ECE "
         "(noise) | more |\n|---|---|---|---:|---:|---|---:|---:|---:|---|\n";
  for (const std::string& name : model_order(report)) {
    const Json& model = report["models"][name];
    for (const auto& [question, q] : model["questions"].items()) {
      out << "| " << cell(name) << " | " << cell(question) << " | " << type_name(q) << " | "
          << q.value("n", 0) << " | " << pct(num(q, "coverage")) << " | " << rate(q, "accuracy")
          << " | " << fixed(num(q, "macro_f1"), 3) << " | " << fixed(num(q, "brier"), 3) << " | "
          << fixed(num(q, "ece"), 3) << " (" << fixed(num(q, "ece_noise_floor"), 2) << ") | "
          << cell(extras(q)) << " |\n";
    }
  }
  out << "\n### Per label\n\n| model | question | label | F1 | precision | recall | support |\n"
         "|---|---|---|---:|---:|---:|---:|\n";
  for (const std::string& name : model_order(report)) {
    const Json& model = report["models"][name];
    for (const auto& [question, q] : model["questions"].items()) {
      for (const auto& [label, s] : q["classes"].items()) {
        out << "| " << cell(name) << " | " << cell(question) << " | " << cell(label) << " | "
            << fixed(num(s, "f1"), 3) << " | " << rate(s, "precision") << " | " << rate(s, "recall")
            << " | " << s.value("support", 0) << " |\n";
      }
    }
  }
  const auto rows = comparison_rows(report);
  if (!rows.empty()) {
    out << "\n### Comparison\n\n| A | B | question | accuracy A − B (95% CI) | McNemar p | flip "
           "rate |\n|---|---|---|---|---:|---:|\n";
  }
  for (const auto& row : rows) {
    out << "| " << cell(row.a) << " | " << cell(row.b) << " | " << cell(row.question) << " | "
        << fixed(100 * row.difference, 1) << " pts [" << fixed(100 * row.low, 1) << ", "
        << fixed(100 * row.high, 1) << "] | " << fixed(row.mcnemar_p, 4) << " | "
        << pct(row.flip_rate) << " |\n";
  }
  return out.str();
}

}  // namespace clef::cli
