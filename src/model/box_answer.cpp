// The implementation of box_answer.hpp: a box's geometry, refused rather than clamped.
#include "model/box_answer.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "util/ascii.hpp"
#include "util/decimal_text.hpp"

namespace clef::detail {
namespace {

bool in_unit_range(double x) {
  return std::isfinite(x) && x >= 0.0 && x <= 1.0;
}

/// The shortest decimal that reads back as `x`: what the server sent, not six rounded places
/// that can make -1e-9 read "-0.000000" or 0.3000000001 read as 0.3.
std::string shortest(double x) {
  char buffer[32] = "";
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
    if (std::strtod(buffer, nullptr) == x) break;
  }
  return buffer;
}

}  // namespace

std::string box_geometry_problem(const BoxAnswer& box) {
  const std::pair<const char*, double> edges[] = {
      {"top", box.top}, {"bottom", box.bottom}, {"left", box.left}, {"right", box.right}};
  for (const auto& [name, edge] : edges) {
    if (!in_unit_range(edge)) {
      return std::string("box.") + name + " is " + shortest(edge) + ", outside [0, 1]";
    }
  }
  if (!(box.top < box.bottom)) {
    return "box.top " + shortest(box.top) + " is not above box.bottom " + shortest(box.bottom) +
           " (top < bottom)";
  }
  if (!(box.left < box.right)) {
    return "box.left " + shortest(box.left) + " is not left of box.right " + shortest(box.right) +
           " (left < right)";
  }
  return {};
}

std::string read_box(const Json& answer, BoxAnswer& out) {
  const auto it = answer.find("box");
  if (it == answer.end() || !it->is_object()) return "the answer has no \"box\" object";
  BoxAnswer box;
  const std::pair<const char*, double*> edges[] = {
      {"top", &box.top}, {"bottom", &box.bottom}, {"left", &box.left}, {"right", &box.right}};
  for (const auto& [name, edge] : edges) {
    const auto value = number_field(*it, name);
    if (!value) return std::string("box.") + name + " is missing or not a number";
    *edge = *value + 0.0;  // -0 is 0: "-0" is no edge anyone drew
  }
  if (auto problem = box_geometry_problem(box); !problem.empty()) return problem;
  const auto confidence = number_field(answer, "confidence");
  if (!confidence || !in_unit_range(*confidence)) {
    return "the box's confidence is missing or outside [0, 1]";
  }
  box.confidence = *confidence + 0.0;
  out = box;
  return {};
}

std::string box_text(const BoxAnswer& box) {
  std::string text;
  for (double edge : {box.top, box.bottom, box.left, box.right}) {
    text += (text.empty() ? "" : ",") + shortest(edge + 0.0);
  }
  return text;
}

std::optional<BoxAnswer> parse_box_text(std::string_view text, std::string& problem) {
  text = trimmed_space(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);  // a JSON array of the four, as a JSONL file has it
  }
  double edges[4] = {0, 0, 0, 0};
  std::size_t count = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view part = trimmed_space(
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    const auto value = parse_decimal(part);
    if (count == 4 || !value) {
      problem = "a box is four numbers, top,bottom,left,right (such as 0.25,0.82,0.44,0.84)";
      return std::nullopt;
    }
    edges[count++] = *value + 0.0;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (count != 4) {
    problem = "a box is four numbers, top,bottom,left,right (such as 0.25,0.82,0.44,0.84)";
    return std::nullopt;
  }
  BoxAnswer box;
  box.top = edges[0];
  box.bottom = edges[1];
  box.left = edges[2];
  box.right = edges[3];
  problem = box_geometry_problem(box);
  if (!problem.empty()) return std::nullopt;
  return box;
}

}  // namespace clef::detail
