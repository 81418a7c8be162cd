// libFuzzer: one batch input reader, read to the end. Built once per format (CLEF_FUZZ_FORMAT
// names it: fuzz_jsonl_input, fuzz_csv_input, fuzz_tsv_input, fuzz_text_input). Lines only
// move forward, whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "batch_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  clef::cli::InputFields fields;
  // Half the inputs build the state from columns (--state-columns state,id) instead.
  if (size > 0 && (data[0] & 1)) fields.state_columns = {"state", "id"};
  auto reader = clef::cli::make_reader(in, clef::cli::InputFormat::CLEF_FUZZ_FORMAT, fields);
  if (!reader) return 0;
  std::size_t last_line = 0;
  while (auto item = reader.value()->next()) {
    if (item->line <= last_line) __builtin_trap();  // lines only move forward
    last_line = item->line;
    if (item->state) (void)item->state->wire_json();
  }
  return 0;
}
