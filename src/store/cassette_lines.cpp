// The implementation of cassette_lines.hpp.
#include "store/cassette_lines.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "clef/json.hpp"
#include "util/json_text.hpp"
#include "util/write_all.hpp"

namespace clef::detail {

Result<std::pair<std::string, HttpResponse>> read_recording(const std::string& text) {
  auto parsed = clef::parse_json(text, "the cassette line");
  if (!parsed || !parsed->is_object()) {
    return make_error(ErrorKind::invalid_input, "not a JSON object");
  }
  const detail::Json& line = parsed.value();
  const auto key = line.find("key");
  const auto status = line.find("status");
  const auto body = line.find("body");
  if (key == line.end() || !key->is_string() || status == line.end() ||
      !status->is_number_integer() || body == line.end() || !body->is_string()) {
    return make_error(ErrorKind::invalid_input,
                      "it needs a string \"key\", an integer \"status\" and a string \"body\"");
  }
  // Compared as the type nlohmann stored, so no value is narrowed before it is checked.
  const bool in_range =
      status->is_number_unsigned()
          ? status->get<std::uint64_t>() >= 100 && status->get<std::uint64_t>() <= 599
          : status->get<std::int64_t>() >= 100 && status->get<std::int64_t>() <= 599;
  if (!in_range) {
    return make_error(ErrorKind::invalid_input,
                      "\"status\" " + dump_json(*status) + " is not an HTTP status (100 to 599)");
  }
  std::pair<std::string, HttpResponse> out;
  out.first = key->get<std::string>();
  out.second.status = static_cast<int>(status->get<std::int64_t>());
  out.second.body = body->get<std::string>();
  const auto headers = line.find("headers");
  if (headers != line.end() && headers->is_array()) {
    for (const auto& header : *headers) {
      if (header.is_array() && header.size() == 2 && header[0].is_string() &&
          header[1].is_string()) {
        out.second.headers.emplace_back(header[0].get<std::string>(), header[1].get<std::string>());
      }
    }
  }
  return out;
}

namespace {

/// Where the last line of the cassette open on `fd` starts (0: it is the only one).
std::optional<off_t> last_line_start(int fd, off_t size) {
  std::vector<char> chunk(64 * 1024);
  for (off_t end = size; end > 0;) {
    const off_t from = std::max<off_t>(0, end - static_cast<off_t>(chunk.size()));
    const auto want = static_cast<std::size_t>(end - from);
    if (::pread(fd, chunk.data(), want, from) != static_cast<ssize_t>(want)) return std::nullopt;
    for (std::size_t i = want; i > 0; --i) {
      if (chunk[i - 1] == '\n') return from + static_cast<off_t>(i);
    }
    end = from;
  }
  return 0;
}

/// The bytes from `start` to `end` of the file open on `fd`; nullopt past a cassette line's
/// length or when the read fails.
std::optional<std::string> text_between(int fd, off_t start, off_t end) {
  const auto length = static_cast<std::size_t>(end - start);
  if (length > max_cassette_line) return std::nullopt;
  std::string text(length, '\0');
  if (::pread(fd, text.data(), length, start) != static_cast<ssize_t>(length)) return std::nullopt;
  return text;
}

/// Whether the file open on `fd` (`size` bytes, at least one) holds recordings: its first line is
/// one. What does not (a state file, an image, a diary named by mistake) is never cut or
/// appended to.
bool holds_recordings(int fd, off_t size) {
  std::string first;
  std::vector<char> chunk(64 * 1024);
  for (off_t at = 0; at < size && first.size() <= max_cassette_line;) {
    const ssize_t got = ::pread(fd, chunk.data(), chunk.size(), at);
    if (got <= 0) return false;
    const auto* end =
        static_cast<const char*>(std::memchr(chunk.data(), '\n', static_cast<std::size_t>(got)));
    first.append(chunk.data(), end ? static_cast<std::size_t>(end - chunk.data())
                                   : static_cast<std::size_t>(got));
    if (end) break;
    at += got;
  }
  return first.size() <= max_cassette_line && read_recording(first).ok();
}

/// Whether the last line that ends in a newline in the file open on `fd` (`size` bytes) is a
/// recording: a cassette with a user's lines after its recordings is not appended to either.
bool last_whole_line_is_a_recording(int fd, off_t size) {
  const auto end = last_line_start(fd, size);  // just past the last newline
  if (!end) return false;
  if (*end == 0) return true;  // no whole line: the first is the one (holds_recordings)
  const auto start = last_line_start(fd, *end - 1);
  const auto line = start ? text_between(fd, *start, *end - 1) : std::nullopt;
  return line &&
         (line->find_first_not_of(" \t\r") == std::string::npos || read_recording(*line).ok());
}

}  // namespace

void mend_last_line(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0) return;
  char last = '\n';
  if (::pread(fd, &last, 1, info.st_size - 1) != 1 || last == '\n') return;
  const auto start = last_line_start(fd, info.st_size);
  if (!start) return;
  if (const auto tail = text_between(fd, *start, info.st_size); tail && read_recording(*tail)) {
    detail::write_all(fd, "\n");
    return;
  }
  [[maybe_unused]] const int cut = ::ftruncate(fd, *start);
}

bool may_append_to(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0) return true;
  return holds_recordings(fd, info.st_size) && last_whole_line_is_a_recording(fd, info.st_size);
}

}  // namespace clef::detail
