// The implementation of eval_text.hpp: clef eval's report for people.
#include "eval/eval_text.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "batch/cost_tally.hpp"
#include "common/context.hpp"
#include "common/number_text.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

using ansi::bold;
using ansi::dim;
using ansi::reset;

std::string pct(const std::optional<double>& value) {
  return value ? fixed(100 * *value, 1) + "%" : std::string(undefined_text);
}

/// "85.9% [75.4–92.4]", or "n/a" for an undefined rate.
std::string rate(const std::optional<metrics::Interval>& interval) {
  if (!interval) return undefined_text;
  return pct(interval->value) + " [" + fixed(100 * interval->low, 1) + "–" +
         fixed(100 * interval->high, 1) + "]";
}

std::string bar(double fraction, std::size_t width) {
  const auto filled = static_cast<std::size_t>(fraction * static_cast<double>(width) + 0.5);
  std::string out;
  for (std::size_t i = 0; i < width; ++i) out += i < filled ? "█" : "░";
  return out;
}

/// "ECE 0.054 (noise ~0.12)"; the floor means nothing without an ECE.
std::string ece(const QuestionEvaluation& q, bool color) {
  if (!q.ece) return std::string("ECE ") + undefined_text;
  return "ECE " + fixed(q.ece, 3) + (color ? dim : "") + " (noise ~" + fixed(q.ece_noise_floor, 2) +
         ")" + (color ? reset : "");
}

/// The Markdown table's "ECE (noise)" cell.

/// "-15.2 pts [-25.8, -4.5]": a comparison's accuracy difference.
std::string points(const ModelComparison& c) {
  if (!c.accuracy_difference) return undefined_text;
  const metrics::Interval& d = *c.accuracy_difference;
  return fixed(100 * d.value, 1) + " pts [" + fixed(100 * d.low, 1) + ", " +
         fixed(100 * d.high, 1) + "]";
}

/// Text from the user's files (labels, question and model names, error messages) as Markdown
/// that renders as itself: every ASCII punctuation character is backslash-escaped, which
/// CommonMark defines as that character, literally (so `<img …>`, `|`, backticks, `[x](y)`,
/// `*`, `&lt;` stay text); line breaks and other control characters become spaces, which would
/// end a table row; bidirectional overrides, C1 controls and invalid UTF-8 become '?'
/// (terminal_safe_line), as a terminal would be shown them.
std::string markdown_text(const std::string& text) {
  std::string spaced = text;
  for (char& c : spaced) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = ' ';
  }
  std::string out;
  for (char c : terminal_safe_line(spaced)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80 && std::ispunct(byte))
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out;
}

/// A failure's message in one line of a summary: a results file may hold any text at any length.
std::string shortened(const std::string& message) {
  constexpr std::size_t limit = 200;
  if (message.size() <= limit) return message;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  return message.substr(0, cut) + "…";
}

void print_classes(std::ostream& out, const QuestionEvaluation& q) {
  std::size_t width = 0;
  for (const auto& [label, scores] : q.classes) width = std::max(width, label.size());
  for (const auto& [label, scores] : q.classes) {
    out << "    " << padded(terminal_safe_line(label), width) << "  " << bar(scores.f1, 20)
        << " F1 " << fixed(scores.f1, 2) << "  P " << fixed(value_of(class_precision(scores)), 2)
        << "  R " << fixed(value_of(class_recall(scores)), 2) << "  n " << scores.support << "\n";
  }
}

/// The question's own threshold (not a label's) and how it held on the check half.
void print_threshold(std::ostream& out, const EvalReport& report,
                     const std::vector<FittedThreshold>& fitted) {
  for (const auto& t : fitted) {
    if (!t.label.empty()) continue;
    out << "    threshold for precision ≥ " << fixed(report.target_precision, 2) << ": "
        << (t.threshold ? fixed(*t.threshold, 3) : std::string("none reaches it")) << "  (coverage "
        << pct(t.fit_coverage) << " fit, " << pct(t.check_coverage) << " check; precision "
        << fixed(t.check_precision, 3) << " on the check half)\n";
  }
}

/// The probes' lines (--permute, --repeat), with the first items that changed.
void print_probes(std::ostream& out, const QuestionEvaluation& q) {
  constexpr std::size_t shown = 3;
  auto changed = [&](const std::vector<ProbeFlip>& flips) {
    for (std::size_t k = 0; k < flips.size() && k < shown; ++k) {
      out << "      " << terminal_safe_line(flips[k].id) << ":";
      for (const auto& winner : flips[k].winners) out << " " << terminal_safe_line(winner);
      out << "\n";
    }
    if (flips.size() > shown) out << "      … and " << flips.size() - shown << " more\n";
  };
  if (q.position) {
    out << "    " << position_summary(*q.position) << "\n";
    changed(q.position->flips);
  }
  if (q.repeat) {
    out << "    " << repeat_summary(*q.repeat) << "\n";
    changed(q.repeat->flips);
  }
}

void print_model(std::ostream& out, const EvalReport& report, const ModelEvaluation& model,
                 bool color) {
  out << (color ? bold : "") << terminal_safe_line(model.model) << (color ? reset : "") << "  "
      << report.items << " items · latency p50 " << milliseconds(model.traffic.latency_p50_ms)
      << ", p95 " << milliseconds(model.traffic.latency_p95_ms) << " · "
      << model.traffic.input_tokens << " input tokens\n";
  if (const std::string cost = cost_summary(model); !cost.empty()) out << "  " << cost << "\n";
  for (const std::size_t i : questions_by_name(report)) {
    const QuestionEvaluation& q = model.questions[i];
    out << "  " << (color ? bold : "") << terminal_safe_line(q.question) << (color ? reset : "")
        << " (" << type_name(q.type) << ")  n " << q.n << "  coverage " << pct(value_of(q.coverage))
        << "  accuracy " << rate(q.accuracy);
    // A box has no labels and no probabilities: no macro-F1 and no Brier score to show.
    if (q.type != QuestionType::box) {
      out << "  macro-F1 " << fixed(q.macro_f1, 3) << "  Brier " << fixed(value_of(q.brier), 3);
    }
    out << "  " << ece(q, color) << extras(q) << "\n";
    print_classes(out, q);
    print_probes(out, q);
    if (i < model.thresholds.size()) print_threshold(out, report, model.thresholds[i]);
  }
}

}  // namespace

std::string ece_cell(const QuestionEvaluation& q) {
  if (!q.ece) return undefined_text;
  return fixed(q.ece, 3) + " (" + fixed(q.ece_noise_floor, 2) + ")";
}

std::string milliseconds(const std::optional<double>& value) {
  return value ? fixed(*value, 1) + " ms" : std::string(undefined_text);
}

std::string type_name(QuestionType type) {
  return type == QuestionType::yes_no ? "yes/no" : to_string(type);
}

std::string position_summary(const PositionProbe& p) {
  std::string out = "position (" + std::to_string(p.orders) + " orders): flips " +
                    rate(p.flip_rate) + " of " + std::to_string(p.compared) +
                    " items · winner by position";
  for (double share : p.winner_share) out += " " + pct(share);
  return out + " · mean |Δp| " + fixed(p.mean_abs_delta_p, 3);
}

std::string repeat_summary(const RepeatProbe& r) {
  return "repeat (" + std::to_string(r.repeats) + " requests): self-agreement " +
         rate(r.self_agreement) + " of " + std::to_string(r.compared) + " items · spread " +
         fixed(r.mean_spread, 3);
}

// The line of type-specific numbers: AUROC for yes/no, MAE/within-1/RPS for scores, mean IoU
// for boxes.
std::string extras(const QuestionEvaluation& q) {
  if (q.type == QuestionType::yes_no) return "  AUROC " + fixed(q.auroc, 3);
  if (q.type == QuestionType::score) {
    return "  MAE " + fixed(value_of(q.mae), 2) + "  within-1 " + pct(value_of(q.within_1)) +
           "  RPS " + fixed(value_of(q.rps), 3);
  }
  if (q.type == QuestionType::box) {
    return "  mean IoU " + fixed(value_of(q.mean_iou), 3) + "  IoU>=0.5 " +
           pct(value_of(q.iou_at_least_half));
  }
  return "";
}

std::optional<double> value_of(const std::optional<metrics::Interval>& interval) {
  return interval ? std::optional<double>(interval->value) : std::nullopt;
}

std::optional<metrics::Interval> class_precision(const metrics::ClassScores& scores) {
  return metrics::wilson(scores.correct, scores.predicted);
}

std::optional<metrics::Interval> class_recall(const metrics::ClassScores& scores) {
  return metrics::wilson(scores.correct, scores.support);
}

std::string cost_summary(const ModelEvaluation& model) {
  const ModelCost& cost = model.cost;
  if (cost.known == 0 && cost.unknown == 0) return "";
  if (cost.known == 0)
    return "cost unknown: no decision's cost is known (--price MODEL=INPUT prices them)";
  std::string out = "cost " + dollars_in_message(*cost.total_usd) + " in all · " +
                    dollars_in_message(*cost.per_1000) + " per 1,000 decisions";
  if (cost.per_correct)
    out += " · " + dollars_in_message(*cost.per_correct) + " per item all right";
  out += " (" + std::to_string(cost.known) + " priced";
  if (cost.unknown > 0) out += ", " + std::to_string(cost.unknown) + " of unknown cost";
  return out + ")";
}

std::vector<std::size_t> questions_by_name(const EvalReport& report) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < report.question_names.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return report.question_names[a] < report.question_names[b];
  });
  return order;
}

std::string failure_summary(const ModelEvaluation& model) {
  const ModelTraffic& t = model.traffic;
  const std::string items = std::to_string(t.answered + t.failed + t.missing);
  std::string out;
  if (t.failed > 0) {
    out = std::to_string(t.failed) + " of " + items + " items failed:";
    std::string sep = " ";
    for (const auto& [kind, count] : t.failures) {
      out += sep + kind + " " + std::to_string(count.items) + " (" + shortened(count.message) + ")";
      sep = ", ";
    }
  }
  if (t.missing > 0) {
    out += (out.empty() ? "" : "; ") + std::to_string(t.missing) + " of " + items +
           " items have no result in the results file";
  }
  return out;
}

void print_eval_summary(std::ostream& out, const EvalReport& report, bool color) {
  for (const auto& model : report.models) print_model(out, report, model, color);
  for (const auto& pair : report.comparisons) {
    out << (color ? bold : "") << terminal_safe_line(pair.a + " vs " + pair.b)
        << (color ? reset : "") << "\n";
    for (const std::size_t i : questions_by_name(report)) {
      const ModelComparison& c = pair.questions[i];
      out << "  " << padded(terminal_safe_line(report.question_names[i]), 10)
          << " accuracy difference " << points(c) << "  McNemar p " << fixed(c.mcnemar_p, 4)
          << "  flips " << pct(value_of(c.flip_rate)) << "  (" << c.only_a_right << " only "
          << terminal_safe_line(pair.a) << ", " << c.only_b_right << " only "
          << terminal_safe_line(pair.b) << ")\n";
    }
  }
}

namespace {

void markdown_questions(std::ostream& out, const EvalReport& report) {
  out << "| model | question | type | n | coverage | accuracy (95% CI) | macro-F1 | Brier | ECE "
         "(noise) | more |\n|---|---|---|---:|---:|---|---:|---:|---:|---|\n";
  for (const auto& model : report.models) {
    for (const std::size_t i : questions_by_name(report)) {
      const QuestionEvaluation& q = model.questions[i];
      out << "| " << markdown_text(model.model) << " | " << markdown_text(q.question) << " | "
          << type_name(q.type) << " | " << q.n << " | " << pct(value_of(q.coverage)) << " | "
          << rate(q.accuracy) << " | " << fixed(q.macro_f1, 3) << " | "
          << fixed(value_of(q.brier), 3) << " | " << ece_cell(q) << " | " << extras(q) << " |\n";
    }
  }
}

void markdown_labels(std::ostream& out, const EvalReport& report) {
  out << "\n### Per label\n\n| model | question | label | F1 | precision | recall | support |\n"
         "|---|---|---|---:|---:|---:|---:|\n";
  for (const auto& model : report.models) {
    for (const std::size_t i : questions_by_name(report)) {
      const QuestionEvaluation& q = model.questions[i];
      for (const auto& [label, s] : q.classes) {
        out << "| " << markdown_text(model.model) << " | " << markdown_text(q.question) << " | "
            << markdown_text(label) << " | " << fixed(s.f1, 3) << " | " << rate(class_precision(s))
            << " | " << rate(class_recall(s)) << " | " << s.support << " |\n";
      }
    }
  }
}

void markdown_comparisons(std::ostream& out, const EvalReport& report) {
  if (report.comparisons.empty()) return;
  out << "\n### Comparison\n\n| A | B | question | accuracy A − B (95% CI) | McNemar p | flip "
         "rate |\n|---|---|---|---|---:|---:|\n";
  for (const auto& pair : report.comparisons) {
    for (const std::size_t i : questions_by_name(report)) {
      const ModelComparison& c = pair.questions[i];
      out << "| " << markdown_text(pair.a) << " | " << markdown_text(pair.b) << " | "
          << markdown_text(report.question_names[i]) << " | " << points(c) << " | "
          << fixed(c.mcnemar_p, 4) << " | " << pct(value_of(c.flip_rate)) << " |\n";
    }
  }
}

/// The probes' lines per model and question, when --permute or --repeat ran.
void markdown_probes(std::ostream& out, const EvalReport& report) {
  bool heading = false;
  for (const auto& model : report.models) {
    for (const std::size_t i : questions_by_name(report)) {
      const QuestionEvaluation& q = model.questions[i];
      for (const std::string& line : {q.position ? position_summary(*q.position) : std::string(),
                                      q.repeat ? repeat_summary(*q.repeat) : std::string()}) {
        if (line.empty()) continue;
        if (!heading) out << "\n### Probes\n\n";
        heading = true;
        out << "- " << markdown_text(model.model) << " · " << markdown_text(q.question) << ": "
            << markdown_text(line) << "\n";
      }
    }
  }
}

}  // namespace

std::string report_markdown(const EvalReport& report) {
  std::ostringstream out;
  out << "## clef eval\n\n"
      << report.items << " items · dataset `" << report.dataset_sha256.substr(0, 12)
      << "` · questions `" << report.questions_sha256.substr(0, 12) << "`\n\n";
  markdown_questions(out, report);
  markdown_labels(out, report);
  markdown_comparisons(out, report);
  markdown_probes(out, report);
  bool priced = false;
  for (const auto& model : report.models) {
    const std::string cost = cost_summary(model);
    if (cost.empty()) continue;
    if (!priced) out << "\n### Cost\n\n";
    priced = true;
    out << "- " << markdown_text(model.model) << ": " << markdown_text(cost) << "\n";
  }
  bool heading = false;
  for (const auto& model : report.models) {
    const std::string failures = failure_summary(model);
    if (failures.empty()) continue;
    if (!heading) out << "\n### Failed requests\n\n";
    heading = true;
    out << "- " << markdown_text(model.model) << ": " << markdown_text(failures) << "\n";
  }
  return out.str();
}

}  // namespace clef::cli
