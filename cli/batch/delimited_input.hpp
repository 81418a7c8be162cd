// Internal to `clef batch`: CSV and TSV input (RFC 4180 records: quoted fields may hold
// separators, "" and line breaks), its header row naming the id and state columns.
#pragma once

#include <istream>
#include <memory>

#include "batch/batch_input.hpp"

namespace clef::cli {

/// A reader of `in` after its header row, which must name the columns `fields` asks for.
Result<std::unique_ptr<InputReader>> make_delimited_reader(std::istream& in, char separator,
                                                           const InputFields& fields);

}  // namespace clef::cli
