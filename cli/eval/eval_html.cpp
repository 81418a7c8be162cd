// The implementation of eval_html.hpp: clef eval's HTML report.
#include "eval/eval_html.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "batch/cost_tally.hpp"
#include "common/number_text.hpp"
#include "common/terminal_text.hpp"
#include "eval/eval_text.hpp"

namespace clef::cli {
namespace {

/// Labels, ids and model names come from the user's files: everything is escaped, and control
/// characters, bidirectional overrides and invalid UTF-8 shown as '?' (terminal_safe) — a
/// right-to-left override would show a label as another.
std::string escape(const std::string& text) {
  std::string out;
  for (char c : terminal_safe(text)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// "85.9% [75.4–92.4]", or "n/a" for an undefined rate.
std::string interval(const std::optional<metrics::Interval>& rate) {
  if (!rate) return undefined_text;
  return fixed(100 * rate->value, 1) + "% <small>[" + fixed(100 * rate->low, 1) + "–" +
         fixed(100 * rate->high, 1) + "]</small>";
}

std::string f1_bars(const std::map<std::string, metrics::ClassScores>& classes) {
  const int row = 22, label_width = 130, bar_width = 260;
  const int height = row * static_cast<int>(classes.size()) + 10;
  std::ostringstream svg;
  svg << "<svg role=\"img\" aria-label=\"F1 per label\" width=\"" << label_width + bar_width + 60
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << label_width + bar_width + 60 << " "
      << height << "\">";
  int y = 5;
  for (const auto& [label, scores] : classes) {
    const double f1 = scores.f1;
    svg << "<text x=\"" << label_width - 6 << "\" y=\"" << y + 15
        << "\" text-anchor=\"end\" class=\"label\">" << escape(label) << "</text>"
        << "<rect x=\"" << label_width << "\" y=\"" << y + 3 << "\" width=\"" << bar_width
        << "\" height=\"16\" class=\"track\"/>"
        << "<rect x=\"" << label_width << "\" y=\"" << y + 3 << "\" width=\""
        << fixed(f1 * bar_width, 1) << "\" height=\"16\" class=\"bar\"><title>" << escape(label)
        << ": F1 " << fixed(f1, 3) << "</title></rect>"
        << "<text x=\"" << label_width + bar_width + 6 << "\" y=\"" << y + 15 << "\">"
        << fixed(f1, 2) << "</text>";
    y += row;
  }
  svg << "</svg>";
  return svg.str();
}

/// The confusion counts as the report names them: a missing answer is "(no answer)".
using ConfusionTable = std::map<std::string, std::map<std::string, std::size_t>>;

ConfusionTable named_confusion(const metrics::Confusion& confusion) {
  ConfusionTable out;
  for (const auto& [gold, row] : confusion.counts()) {
    for (const auto& [predicted, count] : row) {
      out[gold][predicted.empty() ? "(no answer)" : predicted] = count;
    }
  }
  return out;
}

std::string confusion_matrix(const metrics::Confusion& counts) {
  const ConfusionTable confusion = named_confusion(counts);
  std::set<std::string> predicted_set;
  for (const auto& [gold, row] : confusion) {
    for (const auto& [predicted, count] : row) predicted_set.insert(predicted);
    predicted_set.insert(gold);
  }
  const std::vector<std::string> columns(predicted_set.begin(), predicted_set.end());
  std::vector<std::string> rows;
  for (const auto& [gold, row] : confusion) rows.push_back(gold);
  const int cell = 44, left = 130, top = 110;
  const int width =
      left + cell * static_cast<int>(columns.size()) + 60;  // room for the slanted last label
  const int height = top + cell * static_cast<int>(rows.size()) + 10;
  std::ostringstream svg;
  svg << "<svg role=\"img\" aria-label=\"Confusion matrix\" width=\"" << width << "\" height=\""
      << height << "\" viewBox=\"0 0 " << width << " " << height << "\">";
  svg << "<text x=\"" << left << "\" y=\"14\" class=\"axis\">predicted →</text>";
  svg << "<text x=\"4\" y=\"" << top - 8 << "\" class=\"axis\">gold ↓</text>";
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const int x = left + cell * static_cast<int>(c) + cell / 2;
    svg << "<text transform=\"translate(" << x << "," << top - 6
        << ") rotate(-45)\" class=\"label\">" << escape(columns[c]) << "</text>";
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = confusion.at(rows[r]);
    double total = 0;
    for (const auto& [predicted, count] : row) total += static_cast<double>(count);
    const int y = top + cell * static_cast<int>(r);
    svg << "<text x=\"" << left - 6 << "\" y=\"" << y + cell / 2 + 5
        << "\" text-anchor=\"end\" class=\"label\">" << escape(rows[r]) << "</text>";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto found = row.find(columns[c]);
      const double count = found == row.end() ? 0 : static_cast<double>(found->second);
      const double share = total > 0 ? count / total : 0;
      const int x = left + cell * static_cast<int>(c);
      const bool diagonal = columns[c] == rows[r];
      svg << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell - 2 << "\" height=\""
          << cell - 2 << "\" class=\"" << (diagonal ? "hit" : "miss") << "\" fill-opacity=\""
          << fixed(0.08 + 0.92 * share, 3) << "\"><title>gold " << escape(rows[r]) << ", predicted "
          << escape(columns[c]) << ": " << count << "</title></rect>"
          << "<text x=\"" << x + cell / 2 - 1 << "\" y=\"" << y + cell / 2 + 4
          << "\" text-anchor=\"middle\" class=\"count\">" << count << "</text>";
    }
  }
  svg << "</svg>";
  return svg.str();
}

/// Accuracy against mean confidence per bin; the diagonal is perfect calibration.
std::string reliability_diagram(const std::vector<metrics::CalibrationBin>& bins) {
  const int size = 240, pad = 36;
  std::ostringstream svg;
  svg << "<svg role=\"img\" aria-label=\"Reliability diagram\" width=\"" << size + 2 * pad
      << "\" height=\"" << size + 2 * pad << "\" viewBox=\"0 0 " << size + 2 * pad << " "
      << size + 2 * pad << "\">";
  svg << "<rect x=\"" << pad << "\" y=\"" << pad << "\" width=\"" << size << "\" height=\"" << size
      << "\" class=\"frame\"/>";
  svg << "<line x1=\"" << pad << "\" y1=\"" << pad + size << "\" x2=\"" << pad + size << "\" y2=\""
      << pad << "\" class=\"ideal\"/>";
  for (const auto& bin : bins) {
    if (!bin.accuracy || !bin.mean_confidence) continue;  // an empty bin
    const double low = bin.low, high = bin.high;
    const double accuracy = *bin.accuracy, confidence = *bin.mean_confidence;
    const double x = pad + low * size, w = (high - low) * size;
    svg << "<rect x=\"" << fixed(x, 1) << "\" y=\"" << fixed(pad + (1 - accuracy) * size, 1)
        << "\" width=\"" << fixed(w - 1, 1) << "\" height=\"" << fixed(accuracy * size, 1)
        << "\" class=\"bar\"><title>confidence " << fixed(low, 2) << "–" << fixed(high, 2) << ": "
        << bin.n << " answers, accuracy " << fixed(accuracy, 3) << ", mean confidence "
        << fixed(confidence, 3) << "</title></rect>";
    svg << "<circle cx=\"" << fixed(pad + confidence * size, 1) << "\" cy=\""
        << fixed(pad + (1 - accuracy) * size, 1) << "\" r=\"3\" class=\"dot\"/>";
  }
  svg << "<text x=\"" << pad + size / 2 << "\" y=\"" << size + 2 * pad - 8
      << "\" text-anchor=\"middle\" class=\"axis\">winner probability</text>";
  svg << "<text transform=\"translate(12," << pad + size / 2
      << ") rotate(-90)\" text-anchor=\"middle\" class=\"axis\">accuracy</text>";
  svg << "<text x=\"" << pad << "\" y=\"" << pad + size + 14 << "\" class=\"tick\">0</text>";
  svg << "<text x=\"" << pad + size << "\" y=\"" << pad + size + 14
      << "\" text-anchor=\"end\" class=\"tick\">1</text>";
  svg << "</svg>";
  return svg.str();
}

/// Accuracy (every labelled question right, with its Wilson interval) against dollars per
/// 1,000 decisions, one point per model whose cost is known: which model is worth its price.
std::string cost_chart(const EvalReport& report) {
  double most = 0;
  for (const auto& model : report.models)
    if (model.cost.per_1000 && model.overall.all_correct)
      most = std::max(most, *model.cost.per_1000);
  if (most <= 0) return "";
  const int width = 360, height = 240, pad = 48;
  const double x_max = most * 1.25;
  auto x_of = [&](double dollars) { return pad + dollars / x_max * width; };
  auto y_of = [&](double rate) { return pad + (1 - rate) * height; };
  std::ostringstream svg;
  svg << "<svg role=\"img\" aria-label=\"Accuracy against cost\" width=\"" << width + 2 * pad
      << "\" height=\"" << height + 2 * pad << "\">";
  svg << "<rect x=\"" << pad << "\" y=\"" << pad << "\" width=\"" << width << "\" height=\""
      << height << "\" class=\"frame\"/>";
  for (const auto& model : report.models) {
    if (!model.cost.per_1000 || !model.overall.all_correct) continue;
    const metrics::Interval& right = *model.overall.all_correct;
    const double x = x_of(*model.cost.per_1000);
    svg << "<line x1=\"" << fixed(x, 1) << "\" y1=\"" << fixed(y_of(right.low), 1) << "\" x2=\""
        << fixed(x, 1) << "\" y2=\"" << fixed(y_of(right.high), 1) << "\" class=\"whisker\"/>";
    svg << "<circle cx=\"" << fixed(x, 1) << "\" cy=\"" << fixed(y_of(right.value), 1)
        << "\" r=\"5\" class=\"dot\"><title>" << escape(model.model) << ": "
        << fixed(100 * right.value, 1) << "% all right, "
        << escape(dollars_in_message(*model.cost.per_1000))
        << " per 1,000 decisions</title></circle>";
    svg << "<text x=\"" << fixed(x + 8, 1) << "\" y=\"" << fixed(y_of(right.value) - 6, 1)
        << "\" class=\"label\">" << escape(model.model) << "</text>";
  }
  svg << "<text x=\"" << pad + width / 2 << "\" y=\"" << height + 2 * pad - 10
      << "\" text-anchor=\"middle\" class=\"axis\">dollars per 1,000 decisions</text>";
  svg << "<text transform=\"translate(14," << pad + height / 2
      << ") rotate(-90)\" text-anchor=\"middle\" class=\"axis\">items all right</text>";
  svg << "<text x=\"" << pad << "\" y=\"" << pad + height + 14 << "\" class=\"tick\">$0</text>";
  svg << "<text x=\"" << pad + width << "\" y=\"" << pad + height + 14
      << "\" text-anchor=\"end\" class=\"tick\">" << escape(dollars_in_message(x_max)) << "</text>";
  svg << "<text x=\"" << pad - 4 << "\" y=\"" << pad + 4
      << "\" text-anchor=\"end\" class=\"tick\">100%</text>";
  svg << "<text x=\"" << pad - 4 << "\" y=\"" << pad + height
      << "\" text-anchor=\"end\" class=\"tick\">0%</text>";
  svg << "</svg>";
  return svg.str();
}

std::string difference(const ModelComparison& c) {
  if (!c.accuracy_difference) return undefined_text;
  const metrics::Interval& d = *c.accuracy_difference;
  return fixed(100 * d.value, 1) + " pts <small>[" + fixed(100 * d.low, 1) + ", " +
         fixed(100 * d.high, 1) + "]</small>";
}

const char* const style = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em}
h3{font-size:1.05em;margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}
.charts figure{margin:0}figcaption{font-weight:600;margin-bottom:.3em}
.label,.count,.tick,.axis{font-size:12px;fill:#222}.axis{fill:#666}
.track{fill:#eee}.bar{fill:#3b6ea8}.hit{fill:#2e7d32}.miss{fill:#c62828}
.frame{fill:none;stroke:#999}.ideal{stroke:#999;stroke-dasharray:4 3}.dot{fill:#f9a825}
.whisker{stroke:#3b6ea8;stroke-width:2}
code{background:#f4f4f4;padding:0 3px}.failed{color:#c62828}
)";

/// Every item a probe saw change: its id and the winner in each order or repeat.
void html_flips(std::ostream& out, const std::string& summary, const std::vector<ProbeFlip>& flips,
                const char* pass) {
  out << "<p>" << escape(summary) << "</p>\n";
  if (flips.empty()) return;
  out << "<table><tr><th>item</th>";
  for (std::size_t k = 0; k < flips.front().winners.size(); ++k)
    out << "<th>" << pass << " " << k + 1 << "</th>";
  out << "</tr>\n";
  for (const auto& flip : flips) {
    out << "<tr><td>" << escape(flip.id) << "</td>";
    for (const auto& winner : flip.winners) out << "<td>" << escape(winner) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n";
}

void html_probes(std::ostream& out, const QuestionEvaluation& q) {
  if (q.position) html_flips(out, position_summary(*q.position), q.position->flips, "order");
  if (q.repeat) html_flips(out, repeat_summary(*q.repeat), q.repeat->flips, "request");
}

void html_model(std::ostream& out, const EvalReport& report, const ModelEvaluation& model) {
  const std::string& name = model.model;
  out << "<h2>" << escape(name) << "</h2>\n<p>latency p50 "
      << milliseconds(model.traffic.latency_p50_ms) << ", p95 "
      << milliseconds(model.traffic.latency_p95_ms) << " · " << model.traffic.input_tokens
      << " input tokens</p>\n";
  if (const std::string cost = cost_summary(model); !cost.empty())
    out << "<p>" << escape(cost) << "</p>\n";
  const std::string failures = failure_summary(model);
  if (!failures.empty()) out << "<p class=\"failed\">" << escape(failures) << "</p>\n";
  out << "<table><tr><th>question</th><th>type</th><th>n</th><th>coverage</th>"
         "<th>accuracy</th><th>macro-F1</th><th>Brier</th><th>log loss</th><th>ECE "
         "(noise floor)</th><th>more</th></tr>\n";
  for (const std::size_t i : questions_by_name(report)) {
    const QuestionEvaluation& q = model.questions[i];
    out << "<tr><td>" << escape(q.question) << "</td><td>" << escape(to_string(q.type))
        << "</td><td>" << q.n << "</td><td>" << interval(q.coverage) << "</td><td>"
        << interval(q.accuracy) << "</td><td>" << fixed(q.macro_f1, 3) << "</td><td>"
        << fixed(value_of(q.brier), 3) << "</td><td>" << fixed(value_of(q.log_loss), 3)
        << "</td><td>" << ece_cell(q) << "</td><td>" << escape(extras(q)) << "</td></tr>\n";
  }
  out << "</table>\n";
  for (const std::size_t i : questions_by_name(report)) {
    const QuestionEvaluation& q = model.questions[i];
    out << "<h3>" << escape(name) << " · " << escape(q.question) << "</h3>\n<div class=\"charts\">";
    // A box has no labels: its overlap is in the table, its calibration in the diagram.
    if (q.type != QuestionType::box) {
      out << "<figure><figcaption>F1 per label</figcaption>" << f1_bars(q.classes)
          << "</figure><figure><figcaption>Confusion matrix</figcaption>"
          << confusion_matrix(q.confusion) << "</figure>";
    }
    out << "<figure><figcaption>Reliability</figcaption>" << reliability_diagram(q.reliability)
        << "</figure></div>\n";
    html_probes(out, q);
  }
}

void html_comparisons(std::ostream& out, const EvalReport& report) {
  if (report.comparisons.empty()) return;
  out << "<h2>Comparison</h2>\n<table><tr><th>A</th><th>B</th><th>question</th><th>accuracy A − "
         "B</th><th>McNemar p</th><th>flip rate</th></tr>\n";
  for (const auto& pair : report.comparisons) {
    for (const std::size_t i : questions_by_name(report)) {
      const ModelComparison& c = pair.questions[i];
      out << "<tr><td>" << escape(pair.a) << "</td><td>" << escape(pair.b) << "</td><td>"
          << escape(report.question_names[i]) << "</td><td>" << difference(c) << "</td><td>"
          << fixed(c.mcnemar_p, 4) << "</td><td>"
          << (c.flip_rate ? fixed(100 * c.flip_rate->value, 1) + "%" : std::string(undefined_text))
          << "</td></tr>\n";
    }
  }
  out << "</table>\n";
}

}  // namespace

std::string report_html(const EvalReport& report) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>clef eval "
         "report</title><style>"
      << style << "</style></head><body>\n<h1>clef eval</h1>\n<p>" << report.items
      << " items · dataset <code>" << escape(report.dataset_sha256) << "</code>"
      << " · questions <code>" << escape(report.questions_sha256) << "</code></p>\n";
  for (const auto& model : report.models) html_model(out, report, model);
  html_comparisons(out, report);
  if (const std::string chart = cost_chart(report); !chart.empty()) {
    out << "<h2>Accuracy and cost</h2>\n<div class=\"charts\"><figure><figcaption>Items whose "
           "every labelled question "
           "is right (95% interval) against dollars per 1,000 decisions</figcaption>"
        << chart << "</figure></div>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace clef::cli
