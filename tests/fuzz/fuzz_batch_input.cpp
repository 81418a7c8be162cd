// libFuzzer: every batch input reader (JSONL, CSV, TSV, text) over the same bytes, read to the
// end. The first byte picks the reader.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "batch_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const clef::cli::InputFormat formats[] = {
      clef::cli::InputFormat::jsonl, clef::cli::InputFormat::csv, clef::cli::InputFormat::tsv,
      clef::cli::InputFormat::text};
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  auto reader = clef::cli::make_reader(in, formats[data[0] % 4], {"id", "state"});
  if (!reader) return 0;
  std::size_t last_line = 0;
  while (auto item = reader.value()->next()) {
    if (item->line <= last_line) __builtin_trap();  // lines only move forward
    last_line = item->line;
    if (item->state) (void)item->state->wire_json();
  }
  return 0;
}
