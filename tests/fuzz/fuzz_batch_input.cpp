// libFuzzer: one batch input reader, read to the end. Built once per format (CLEF_FUZZ_FORMAT
// names it: fuzz_jsonl_input, fuzz_csv_input, fuzz_tsv_input, fuzz_text_input). Lines only
// move forward, whatever the bytes; and for JSONL and text, as the README promises, every input
// line gives exactly one item (so one output line), numbered 1, 2, 3…
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "batch/batch_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  clef::cli::InputFields fields;
  // Half the inputs build the state from columns (--state-columns state,id) instead.
  if (size > 0 && (data[0] & 1)) fields.state_columns = {"state", "id"};
  constexpr auto format = clef::cli::InputFormat::CLEF_FUZZ_FORMAT;
  auto reader = clef::cli::make_reader(in, format, fields);
  if (!reader) return 0;
  std::size_t last_line = 0;
  std::size_t items = 0;
  while (auto item = reader.value()->next()) {
    if (item->line <= last_line) __builtin_trap();  // lines only move forward
    last_line = item->line;
    ++items;
    if (item->state) (void)item->state->wire_json();
  }
  if constexpr (format == clef::cli::InputFormat::jsonl || format == clef::cli::InputFormat::text) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // skipped, not a line
    std::size_t lines = 0;
    for (char c : text) lines += c == '\n';
    if (!text.empty() && text.back() != '\n') ++lines;  // a last line without its newline
    if (items != lines || last_line != lines) __builtin_trap();
  }
  return 0;
}
