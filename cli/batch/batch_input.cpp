// The implementation of batch_input.hpp: clef batch's input readers.
#include "batch/batch_input.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "batch/delimited_input.hpp"
#include "clef/json.hpp"
#include "common/input_file.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

/// The text after the last dot of the file name ("" when it has none).
std::string extension_of(const std::string& path) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return path.substr(dot + 1);
}

std::string ascii_lower_copy(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

Result<State> state_from_json(const Json& value, const std::string& where) {
  if (value.is_string()) return State::text(value.get<std::string>());
  if (value.is_object() || value.is_array()) return State::from_json_value(value);
  return make_error(
      ErrorKind::invalid_input,
      std::string("the state must be a string, object or array, not ") + value.type_name(), where);
}

/// A number id wider than 64 bits would be written back with its last digits changed: refused,
/// saying how to keep it.
std::optional<Error> wide_id(const Json& id, std::string_view line, const std::string& field,
                             const std::string& where) {
  if (!id.is_number_float()) return std::nullopt;
  const std::string text(member_text(line, field).value_or(""));
  if (!has_wide_integer(text)) return std::nullopt;
  return make_error(ErrorKind::invalid_input,
                    "the id " + text +
                        " is an integer wider than 64 bits, which clef cannot write back "
                        "exactly: quote it (\"" +
                        text + "\")",
                    where + "." + field);
}

std::string field_text(const Json& object, const std::string& name) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return dump_json(*it);
}

class JsonlReader final : public InputReader {
 public:
  JsonlReader(std::istream& in, InputFields fields) : m_in(in), m_fields(std::move(fields)) {}
  std::optional<InputItem> next() override {
    Line read;  // at most max_input_line bytes kept; the rest of a longer line is read past
    if (!InputFile::read_line(m_in, read, max_input_line)) return std::nullopt;
    ++m_line;
    InputItem item;
    item.line = m_line;
    if (read.too_long)
      item.state = line_too_long(m_line);
    else
      read_item(read.text, "line " + std::to_string(m_line), item);
    return item;
  }

 private:
  void read_item(const std::string& line, const std::string& where, InputItem& item) const {
    // A blank line still gets its output line: every input line is accounted for.
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      item.state = make_error(ErrorKind::invalid_input, "the line is blank", where);
      return;
    }
    if (read_plain_item(line, item)) return;
    auto parsed = parse_json(line, "the line");
    if (!parsed) {
      Error error = parsed.error();
      error.where = where + ", " + error.where;
      // Text piped to `clef batch -` is read as JSONL: say how to read it as text instead.
      if (line[line.find_first_not_of(" \t")] != '{')
        error.message +=
            " (a JSONL line is a JSON object; for plain text, one state per line, "
            "add --input-format text)";
      item.state = std::move(error);
      return;
    }
    const Json object = std::move(parsed).value();
    if (!object.is_object()) {
      item.state = make_error(ErrorKind::invalid_input, "each line must be a JSON object", where);
      return;
    }
    read_fields(object, line, where, item);
  }

  /// The common line — {"id": a string or an integer, "state": text or JSON, ...} — read with
  /// no JSON value built (a line's parse was the most of reading it); false for anything else,
  /// which the parse then reads, and explains when it is wrong.
  bool read_plain_item(std::string_view line, InputItem& item) const {
    if (!m_fields.extra.empty() || !m_fields.image.empty()) return false;
    const auto members = json_object_members(line);
    if (!members) return false;
    std::optional<std::string_view> id, state;
    for (const JsonMember& member : *members) {
      if (member.key == m_fields.id) id = member.value;
      if (member.key == m_fields.state) state = member.value;
    }
    if (!id || !state) return false;
    auto plain_id = id_of(*id);
    if (!plain_id) return false;
    if (state->front() == '"') {
      const auto text = unescaped_text(*state);
      if (!text) return false;  // escapes: read by the parse
      item.state = State::text(std::string(*text));
    } else if (state->front() == '{' || state->front() == '[') {
      item.state = State::json(*state);
    } else {
      return false;  // a state of another kind: the parse's error says which
    }
    item.id = std::move(*plain_id);
    return true;
  }

  /// The text of the JSON string `value` (valid JSON) when it holds no escape: as written, it is
  /// what the parse reads.
  static std::optional<std::string_view> unescaped_text(std::string_view value) {
    const std::string_view text = value.substr(1, value.size() - 2);
    if (text.find('\\') != std::string_view::npos) return std::nullopt;
    return text;
  }

  /// A string id with no escape, or an integer id that fits 64 bits, as the parse holds it.
  static std::optional<Json> id_of(std::string_view text) {
    if (text.front() == '"') {
      const auto id = unescaped_text(text);
      return id ? std::optional<Json>(Json(std::string(*id))) : std::nullopt;
    }
    if (text.find_first_of(".eE") != std::string_view::npos) return std::nullopt;
    const char* end = text.data() + text.size();
    const auto whole = [&](auto& number) {
      const auto read = std::from_chars(text.data(), end, number);
      return read.ec == std::errc() && read.ptr == end;  // out of range: the parse's
    };
    if (text.front() == '-') {
      std::int64_t number = 0;
      return whole(number) ? std::optional<Json>(Json(number)) : std::nullopt;
    }
    std::uint64_t number = 0;
    return whole(number) ? std::optional<Json>(Json(number)) : std::nullopt;
  }

  void read_fields(const Json& object, const std::string& line, const std::string& where,
                   InputItem& item) const {
    const auto id = object.find(m_fields.id);
    if (id == object.end() || !(id->is_string() || id->is_number())) {
      item.state =
          make_error(ErrorKind::invalid_input,
                     "no string or number \"" + m_fields.id + "\" field (--id-field)", where);
      return;
    }
    if (auto refused = wide_id(*id, line, m_fields.id, where)) {
      item.state = std::move(*refused);
      return;
    }
    item.id = *id;
    for (const auto& name : m_fields.extra) item.extra.push_back(field_text(object, name));
    if (!m_fields.image.empty()) {
      // A path or an array of paths: a number or an object was taken as a path ("5").
      const auto image = object.find(m_fields.image);
      if (image != object.end() && !image->is_null() && !image->is_string() && !image->is_array()) {
        item.state = make_error(ErrorKind::invalid_input,
                                "the \"" + m_fields.image +
                                    "\" field (--image-field) is a path or an array of paths, "
                                    "not " +
                                    image->type_name(),
                                where);
        return;
      }
      item.image = field_text(object, m_fields.image);
    }
    const auto state = object.find(m_fields.state);
    if (state == object.end()) {
      item.state = make_error(ErrorKind::invalid_input,
                              "no \"" + m_fields.state + "\" field (--state-field)", where);
      return;
    }
    item.state = state_from_json(*state, where + "." + m_fields.state);
    // Its integers wider than 64 bits are in the parsed value as doubles: the state is read
    // from the line's own text then, as written (State::json keeps their digits).
    if (item.state && state->is_structured() && has_wide_integer(line)) {
      if (auto text = member_text(line, m_fields.state)) item.state = State::json(*text);
    }
  }

  std::istream& m_in;
  InputFields m_fields;
  std::size_t m_line = 0;
};

class TextReader final : public InputReader {
 public:
  explicit TextReader(std::istream& in) : m_in(in) {}
  std::optional<InputItem> next() override {
    Line read;
    std::string& line = read.text;
    while (InputFile::read_line(m_in, read, max_input_line)) {
      ++m_line;
      if (read.too_long) return InputItem{Json(m_line), line_too_long(m_line), m_line, {}, {}, {}};
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) {
        // A blank line still gets its output line: every input line is accounted for.
        return InputItem{Json(m_line),
                         make_error(ErrorKind::invalid_input, "the state is empty (a blank line)",
                                    "line " + std::to_string(m_line)),
                         m_line,
                         {},
                         {},
                         {}};
      }
      State state = State::text(line);
      if (!state.valid_utf8()) {
        // Said here, with its line: the request's own check could only say "state".
        return InputItem{Json(m_line),
                         make_error(ErrorKind::invalid_input, "the line is not valid UTF-8",
                                    "line " + std::to_string(m_line)),
                         m_line,
                         {},
                         {},
                         {}};
      }
      return InputItem{Json(m_line), std::move(state), m_line, {}, {}, {}};
    }
    return std::nullopt;
  }

 private:
  std::istream& m_in;
  std::size_t m_line = 0;
};

/// Drops a UTF-8 byte order mark at the start (Excel's "CSV UTF-8" writes one): otherwise it
/// is part of the first header name or the first line. Anything else is put back.
void skip_byte_order_mark(std::istream& in) {
  std::streambuf* buffer = in.rdbuf();
  static constexpr unsigned char mark[] = {0xEF, 0xBB, 0xBF};
  int matched = 0;
  try {  // the buffer is called directly: a failing read throws from libstdc++'s (read_line)
    while (matched < 3 && buffer->sgetc() == mark[matched]) {
      buffer->sbumpc();
      ++matched;
    }
    if (matched == 3) return;
    while (matched-- > 0) buffer->sungetc();
  } catch (...) {
    in.setstate(std::ios::badbit);
  }
}

/// Whether the first line of the regular file `path` that is not blank is a JSON object (a BOM
/// before it is skipped). A line longer than max_input_line is not looked at: text.
bool first_line_is_json_object(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  skip_byte_order_mark(file);
  Line line;
  while (read_line(file, line, max_input_line)) {
    if (line.too_long) return false;
    const auto start = line.text.find_first_not_of(" \t\r");
    if (start == std::string::npos) continue;
    if (line.text[start] != '{') return false;
    auto json = parse_json(line.text, "the first line");
    return json && json->is_object();
  }
  return false;
}

}  // namespace

Error line_too_long(std::size_t line) {
  return make_error(ErrorKind::invalid_input,
                    "the line is longer than " + std::to_string(max_input_line >> 20) + " MiB",
                    "line " + std::to_string(line));
}

InputFormat guess_input_format(const std::string& path, std::string* recognised_by) {
  const std::string ext = ascii_lower_copy(extension_of(path));
  if (path == "-" || ext == "jsonl" || ext == "ndjson" || ext == "json") return InputFormat::jsonl;
  if (ext == "csv") return InputFormat::csv;
  if (ext == "tsv") return InputFormat::tsv;
  if (ext == "txt" || ext == "text") return InputFormat::text;
  // Any other name: by content. A stream cannot be looked at without taking what the run
  // reads, so it is read as stdin is, as JSONL (a line that is not JSON says how to read text).
  const PathKind kind = path_kind(path);
  if (kind != PathKind::regular) {
    if (recognised_by && kind == PathKind::stream)
      *recognised_by = "it is a pipe, FIFO or device, read as stdin is";
    return InputFormat::jsonl;  // nothing there, or a directory: opening it says why
  }
  const bool json = first_line_is_json_object(path);
  if (recognised_by) {
    *recognised_by = json ? "its first line is a JSON object" : "its first line is not JSON";
  }
  return json ? InputFormat::jsonl : InputFormat::text;
}

const char* to_string(InputFormat format) noexcept {
  switch (format) {
    case InputFormat::jsonl:
      return "jsonl";
    case InputFormat::csv:
      return "csv";
    case InputFormat::tsv:
      return "tsv";
    case InputFormat::text:
      break;
  }
  return "text";
}

void note_input_format(const Context& context, const std::string& path, InputFormat format,
                       const std::string& why) {
  context.err << "clef: note: reading " << terminal_safe_line(path) << " as " << to_string(format)
              << " (" << why << "); --input-format sets the format\n";
}

Result<InputFormat> parse_input_format(const std::string& name) {
  if (name == "jsonl") return InputFormat::jsonl;
  if (name == "csv") return InputFormat::csv;
  if (name == "tsv") return InputFormat::tsv;
  if (name == "text") return InputFormat::text;
  return make_error(ErrorKind::invalid_input,
                    "unknown input format \"" + name + "\" (jsonl, csv, tsv, text)",
                    "--input-format");
}

Result<std::unique_ptr<InputReader>> make_reader(std::istream& in, InputFormat format,
                                                 const InputFields& fields) {
  skip_byte_order_mark(in);
  switch (format) {
    case InputFormat::jsonl:
      return std::unique_ptr<InputReader>(new JsonlReader(in, fields));
    case InputFormat::text:
      return std::unique_ptr<InputReader>(new TextReader(in));
    case InputFormat::csv:
    case InputFormat::tsv: {
      return make_delimited_reader(in, format == InputFormat::csv ? ',' : '\t', fields);
    }
  }
  return make_error(ErrorKind::invalid_input, "unknown input format");
}

std::optional<std::size_t> count_lines(const std::string& path) {
  // A pipe or FIFO can be read once only: that read is the run's.
  if (path == "-" || path_kind(path) != PathKind::regular) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::size_t lines = 0;
  char buffer[1 << 16];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    // memchr, not a byte-at-a-time loop: this pass over the whole input cost a batch as much as
    // reading its lines did (about 10 instructions a byte).
    const char* const end = buffer + file.gcount();
    for (const char* at = buffer;
         (at = static_cast<const char*>(std::memchr(at, '\n', static_cast<std::size_t>(end - at))));
         ++at)
      ++lines;
  }
  return lines;
}

}  // namespace clef::cli
