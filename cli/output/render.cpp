// The implementation of render.hpp: how a decision is printed at the terminal.
#include "output/render.hpp"

#include "clef/decision_json.hpp"
#include "clef/json.hpp"
#include "clef/policy.hpp"
#include "common/context.hpp"
#include "common/number_text.hpp"
#include "common/terminal_text.hpp"
#include "output/box_view.hpp"
#include "output/table_cells.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

using ansi::bold;
using ansi::cyan;
using ansi::dim;
using ansi::green;
using ansi::reset;

/// For columns: padded to five characters so the rows line up.
std::string percent(double p) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%5.1f%%", p * 100.0);
  return buffer;
}

/// For a sentence: no padding.
std::string percent_in_text(double p) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", p * 100.0);
  return buffer;
}

/// A bar of `width` cells for p, in eighth-blocks; `cells` is how many cells it takes.
std::string bar(double p, int width, int& cells) {
  const int eighths = static_cast<int>(std::lround(std::clamp(p, 0.0, 1.0) * width * 8));
  static const char* partial[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  std::string out;
  for (int i = 0; i < eighths / 8; ++i) out += "█";
  out += partial[eighths % 8];
  cells = eighths / 8 + (eighths % 8 ? 1 : 0);
  if (cells == 0) {
    out = "▏";
    cells = 1;
  }
  return out;
}

struct Row {
  std::string label;
  double probability;
  std::string description;
};

enum class RowOrder { most_likely_first, as_given };

void print_rows(std::ostream& out, std::vector<Row> rows, const std::string& winner, bool color,
                RowOrder order = RowOrder::most_likely_first) {
  if (order == RowOrder::most_likely_first) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.probability > b.probability; });
  }
  // Labels and descriptions come from a questions file or a server: shown one line each.
  for (auto& row : rows) {
    row.label = terminal_safe_line(row.label);
    row.description = terminal_safe_line(row.description);
  }
  const std::string top_label = terminal_safe_line(winner);
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.label.size());
  for (const auto& row : rows) {
    const bool top = row.label == top_label;
    out << "  " << padded(row.label, width) << "  ";
    int cells = 0;
    const std::string drawn = bar(row.probability, 24, cells);
    if (color) out << (top ? green : cyan);
    out << drawn;
    if (color) out << reset;
    // Bars are multi-byte: pad by cells, not bytes.
    out << std::string(static_cast<std::size_t>(std::max(0, 25 - cells)), ' ')
        << percent(row.probability);
    if (!row.description.empty()) {
      out << "  ";
      if (color) out << dim;
      out << row.description;
      if (color) out << reset;
    }
    out << "\n";
  }
}

const Question* find_question(const std::vector<Question>& questions, const std::string& name) {
  for (const auto& q : questions) {
    if (q.name == name) return &q;
  }
  return nullptr;
}

/// The lines under an answer's winner: a bar per option or level, or the box on its image.
void print_values_of(std::ostream& out, const Answer& answer, const Question* q, bool color,
                     std::optional<ImageSize> image) {
  std::vector<Row> rows;
  if (const auto* c = answer.choice()) {
    out << "  " << percent(c->probability) << "  confidence " << fixed(c->confidence, 2) << "\n";
    for (std::size_t i = 0; i < c->probabilities.size(); ++i) {
      std::string description;
      if (q && i < q->options.size() && q->options[i].description)
        description = q->options[i].description->text();
      rows.push_back({c->probabilities[i].label, c->probabilities[i].probability, description});
    }
    print_rows(out, rows, c->choice, color);
  } else if (const auto* n = answer.yes_no()) {
    out << "  P(true) " << percent(n->p_true) << "  confidence " << fixed(n->confidence, 2) << "\n";
    rows = {{"true", n->p_true, q && q->true_means ? *q->true_means : ""},
            {"false", 1.0 - n->p_true, q && q->false_means ? *q->false_means : ""}};
    print_rows(out, rows, n->p_true >= 0.5 ? "true" : "false", color);
  } else if (const auto* s = answer.score()) {
    out << "  expected " << fixed(s->score, 2) << "  confidence " << fixed(s->confidence, 2)
        << "\n";
    // A scale reads in its own order, lowest level first.
    for (std::size_t i = 0; i < s->probabilities.size(); ++i) {
      const std::string label = i < s->labels.size() ? s->labels[i] : "";
      rows.push_back({std::to_string(i) + " " + label, s->probabilities[i], ""});
    }
    print_rows(out, rows, std::to_string(s->most_likely_level) + " " + s->most_likely_label, color,
               RowOrder::as_given);
  } else if (const auto* b = answer.box()) {
    out << "  confidence " << fixed(b->confidence, 2) << "\n";
    print_box(out, *b, image, color);
  }
}

}  // namespace

void print_human(std::ostream& out, const Decision& decision,
                 const std::vector<Question>& questions, bool color,
                 std::optional<ImageSize> image) {
  for (const auto& answer : decision.answers) {
    const Question* q = find_question(questions, answer.question);
    if (color) out << bold;
    out << terminal_safe_line(answer.question);
    if (color) out << reset;
    if (!answer.has_value()) {
      out << "  no answer (" << to_string(answer.status)
          << "): " << terminal_safe_line(answer.problem) << "\n";
      continue;
    }
    out << "  ";
    if (color) out << bold << green;
    out << terminal_safe_line(answer.winner());
    if (color) out << reset;
    if (answer.status == AnswerStatus::abstained) {
      out << "  ABSTAINED ("
          << (answer.threshold ? percent_in_text(trusted_probability(answer)) +
                                     " is below the policy's " + percent_in_text(*answer.threshold)
                               : std::string("the policy trusts no answer here"))
          << ")";
    }
    print_values_of(out, answer, q, color, image);
  }
  if (color) out << dim;
  out << "model " << (decision.model.empty() ? "?" : terminal_safe_line(decision.model)) << " · "
      << decision.usage.input_tokens << " input tokens";
  if (!decision.request_id.empty()) out << " · request " << terminal_safe_line(decision.request_id);
  if (decision.gateway && !decision.gateway->cache_status.empty())
    out << " · gateway cache " << terminal_safe_line(decision.gateway->cache_status);
  if (color) out << reset;
  out << "\n";
}

void print_jsonl(std::ostream& out, const Decision& decision) {
  for (const auto& answer : decision.answers) {
    Json line;
    line["question"] = answer.question;
    const Json fields = to_json(answer);
    for (const auto& item : fields.items()) line[item.key()] = item.value();
    out << dump_json(line) << "\n";
  }
}

void print_tsv(std::ostream& out, const Decision& decision) {
  out << "question\ttype\twinner\tprobability\tconfidence\tstatus\n";
  // A question's name or a label with a tab, a line break or a quote is still one cell (as
  // clef batch --output-format tsv writes it), and never a spreadsheet formula. An answer with
  // no value has empty cells, not a probability of 0 a script would read as one.
  const auto cell = [](const std::string& text) {
    return table_cell(inert(terminal_safe(text)), '\t');
  };
  for (const auto& answer : decision.answers) {
    const bool valued = answer.has_value();
    out << cell(answer.question) << '\t' << to_string(answer.asked) << '\t'
        << (valued ? cell(answer.winner()) : std::string()) << '\t'
        << (valued ? fixed(answer.winner_probability(), 4) : std::string()) << '\t'
        << (valued ? fixed(answer.confidence(), 4) : std::string()) << '\t'
        << to_string(answer.status) << "\n";
  }
}

void print_values(std::ostream& out, const Decision& decision) {
  // An abstained answer is not a label a script may route on.
  for (const auto& answer : decision.answers)
    out << (answer.status == AnswerStatus::abstained ? "(abstained)" : answer.winner()) << "\n";
}

}  // namespace clef::cli
