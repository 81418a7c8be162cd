// The implementation of box_view.hpp: a box on an ASCII frame of its image.
#include "output/box_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

constexpr int frame_columns = 48;
constexpr int max_frame_rows = 24;

/// The cell an edge at `fraction` of `cells` falls in.
int cell(double fraction, int cells) {
  return std::clamp(static_cast<int>(std::floor(fraction * cells)), 0, cells - 1);
}

/// Rows for the image's shape: a terminal cell is about twice as tall as it is wide.
int frame_rows(std::optional<ImageSize> image) {
  if (!image || image->width == 0) return 12;
  const double rows = frame_columns * static_cast<double>(image->height) / image->width / 2.0;
  return std::clamp(static_cast<int>(std::lround(rows)), 3, max_frame_rows);
}

std::string edges_text(const BoxAnswer& box, std::optional<ImageSize> image) {
  char text[160];
  std::snprintf(text, sizeof text, "top %.1f%%  bottom %.1f%%  left %.1f%%  right %.1f%%",
                box.top * 100, box.bottom * 100, box.left * 100, box.right * 100);
  std::string out = text;
  if (image) {
    // Pixels as the image's own edges: left and right of its width, top and bottom of its height.
    std::snprintf(text, sizeof text, "  (x %ld-%ld, y %ld-%ld of %ux%u px)",
                  std::lround(box.left * image->width), std::lround(box.right * image->width),
                  std::lround(box.top * image->height), std::lround(box.bottom * image->height),
                  image->width, image->height);
    out += text;
  }
  return out;
}

}  // namespace

void print_box(std::ostream& out, const BoxAnswer& box, std::optional<ImageSize> image,
               bool color) {
  out << "  " << edges_text(box, image) << "\n";
  const int rows = frame_rows(image);
  const int top = cell(box.top, rows), bottom = cell(box.bottom, rows);
  const int left = cell(box.left, frame_columns), right = cell(box.right, frame_columns);
  out << "  +" << std::string(frame_columns, '-') << "+\n";
  for (int row = 0; row < rows; ++row) {
    std::string line;
    for (int column = 0; column < frame_columns; ++column) {
      const bool inside_rows = row >= top && row <= bottom;
      const bool inside_columns = column >= left && column <= right;
      const bool horizontal = (row == top || row == bottom) && inside_columns;
      const bool vertical = (column == left || column == right) && inside_rows;
      line += horizontal && vertical ? '+' : horizontal ? '-' : vertical ? '|' : ' ';
    }
    out << "  |";
    if (color && row >= top && row <= bottom) {
      out << line.substr(0, static_cast<std::size_t>(left)) << ansi::green
          << line.substr(static_cast<std::size_t>(left), static_cast<std::size_t>(right - left + 1))
          << ansi::reset << line.substr(static_cast<std::size_t>(right + 1));
    } else {
      out << line;
    }
    out << "|\n";
  }
  out << "  +" << std::string(frame_columns, '-') << "+\n";
}

}  // namespace clef::cli
