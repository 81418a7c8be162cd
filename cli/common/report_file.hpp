// A report (clef eval's and clef diff's JSON, Markdown, HTML, a policy) written as clef writes any
// output: a regular file whole or not at all, a FIFO, a device or /dev/fd/N in place.
#pragma once

#include <string>

#include "clef/result.hpp"

namespace clef::cli {

/// Writes `text` to `path`. A wait for a FIFO's reader ends at SIGINT (cancelled); any other
/// failure is invalid_input saying "cannot write WHAT: why", where `path`.
Status write_report(const std::string& path, const std::string& text, const char* what);

}  // namespace clef::cli
