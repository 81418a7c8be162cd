// Internal: a cassette's lines — what one recording line holds, and the checks and mending a
// cassette file gets before anything is appended to it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "clef/result.hpp"
#include "clef/transport.hpp"

namespace clef::detail {

/// The longest cassette line read: a recorded body is at most the 16 MiB response cap, and JSON
/// escaping can grow it a few times.
inline constexpr std::size_t max_cassette_line = 128u * 1024u * 1024u;

/// One recording: its key and response, or why the line is not one.
Result<std::pair<std::string, HttpResponse>> read_recording(const std::string& text);

/// Whether the file open on `fd` may be appended to: a device, a pipe or an empty file may; a
/// regular file only when its first and last whole lines are recordings. What is not a cassette
/// (a state file, an image, a diary named by mistake, a cassette with notes added) is never cut
/// or appended to.
bool may_append_to(int fd);

/// A cassette whose last line has no newline is mended before anything is appended: appended
/// after, that line would sit in the middle, where a replay refuses the whole cassette. A whole
/// recording (the write stopped just short of its newline) gets its newline; a torn one (a full
/// disk, a file-size limit) is cut off, as replay would skip it. Devices and pipes are left alone.
void mend_last_line(int fd);

}  // namespace clef::detail
