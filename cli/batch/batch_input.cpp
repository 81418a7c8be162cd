// The implementation of batch_input.hpp: clef batch's input readers.
#include "batch/batch_input.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include "clef/json.hpp"
#include "common/input_file.hpp"

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

std::string field_text(const Json& object, const std::string& name) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return dump_json(*it);
}

Error too_long_error(std::size_t line) {
  return make_error(ErrorKind::invalid_input,
                    "the line is longer than " + std::to_string(max_input_line >> 20) + " MiB",
                    "line " + std::to_string(line));
}

class JsonlReader final : public InputReader {
 public:
  JsonlReader(std::istream& in, InputFields fields) : m_in(in), m_fields(std::move(fields)) {}
  std::optional<InputItem> next() override {
    Line read;  // at most max_input_line bytes kept; the rest of a longer line is read past
    const std::string& line = read.text;
    while (read_line(m_in, read, max_input_line)) {
      const bool too_long = read.too_long;
      ++m_line;
      InputItem item;
      item.line = m_line;
      const std::string where = "line " + std::to_string(m_line);
      if (too_long) {
        item.state = too_long_error(m_line);
        return item;
      }
      // A blank line still gets its output line: every input line is accounted for.
      if (line.find_first_not_of(" \t\r") == std::string::npos) {
        item.state = make_error(ErrorKind::invalid_input, "the line is blank", where);
        return item;
      }
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
        return item;
      }
      Json object = std::move(parsed).value();
      if (!object.is_object()) {
        item.state = make_error(ErrorKind::invalid_input, "each line must be a JSON object", where);
        return item;
      }
      if (!object.contains(m_fields.id) ||
          !(object[m_fields.id].is_string() || object[m_fields.id].is_number())) {
        item.state =
            make_error(ErrorKind::invalid_input,
                       "no string or number \"" + m_fields.id + "\" field (--id-field)", where);
        return item;
      }
      item.id = object[m_fields.id];
      for (const auto& name : m_fields.extra) item.extra.push_back(field_text(object, name));
      if (!m_fields.image.empty()) item.image = field_text(object, m_fields.image);
      if (!object.contains(m_fields.state)) {
        item.state = make_error(ErrorKind::invalid_input,
                                "no \"" + m_fields.state + "\" field (--state-field)", where);
        return item;
      }
      item.state = state_from_json(object[m_fields.state], where + "." + m_fields.state);
      return item;
    }
    return std::nullopt;
  }

 private:
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
    while (read_line(m_in, read, max_input_line)) {
      ++m_line;
      if (read.too_long) return InputItem{Json(m_line), too_long_error(m_line), m_line, {}, {}, {}};
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
      return InputItem{Json(m_line), State::text(line), m_line, {}, {}, {}};
    }
    return std::nullopt;
  }

 private:
  std::istream& m_in;
  std::size_t m_line = 0;
};

/// RFC 4180 records: quoted fields may hold separators, "" and line breaks.
class DelimitedReader final : public InputReader {
 public:
  DelimitedReader(std::istream& in, char separator) : m_in(in), m_separator(separator) {}

  Status read_header(const InputFields& fields) {
    auto header = record();
    if (!header)
      return make_error(ErrorKind::invalid_input, "the input is empty (a header row is needed)",
                        "line 1");
    m_header = std::move(header).value();
    for (std::size_t i = 0; i < m_header.size(); ++i) {
      if (m_header[i] == fields.id) m_id_column = static_cast<int>(i);
      if (m_header[i] == fields.state) m_state_column = static_cast<int>(i);
    }
    for (const auto& name : fields.state_columns) {
      const auto at = std::find(m_header.begin(), m_header.end(), name);
      if (at == m_header.end()) {
        return make_error(ErrorKind::invalid_input,
                          "the header has no \"" + name + "\" column (--state-columns)", "line 1");
      }
      m_state_columns.emplace_back(name, static_cast<std::size_t>(at - m_header.begin()));
    }
    for (const auto& name : fields.extra) {
      const auto at = std::find(m_header.begin(), m_header.end(), name);
      if (at == m_header.end()) {
        return make_error(ErrorKind::invalid_input,
                          "the header has no \"" + name + "\" column (--label)", "line 1");
      }
      m_extra_columns.push_back(static_cast<std::size_t>(at - m_header.begin()));
    }
    if (!fields.image.empty()) {
      const auto at = std::find(m_header.begin(), m_header.end(), fields.image);
      if (at == m_header.end()) {
        return make_error(ErrorKind::invalid_input,
                          "the header has no \"" + fields.image + "\" column (--image-field)",
                          "line 1");
      }
      m_image_column = static_cast<int>(at - m_header.begin());
    }
    if (!m_state_columns.empty()) m_state_column = static_cast<int>(m_state_columns[0].second);
    m_last_needed = static_cast<std::size_t>(std::max(m_id_column, m_state_column));
    for (const auto& column : m_state_columns)
      m_last_needed = std::max(m_last_needed, column.second);
    if (m_state_column < 0) {
      return make_error(
          ErrorKind::invalid_input,
          "the header has no \"" + fields.state + "\" column (--state-field); " + columns_found(),
          "line 1");
    }
    if (m_id_column < 0) {
      return make_error(
          ErrorKind::invalid_input,
          "the header has no \"" + fields.id + "\" column (--id-field); " + columns_found(),
          "line 1");
    }
    return {};
  }

  std::optional<InputItem> next() override {
    for (;;) {
      const std::size_t start = m_line + 1;
      auto fields = record();
      if (!fields) return std::nullopt;
      if (fields->size() == 1 && (*fields)[0].empty()) continue;  // blank line
      InputItem item;
      item.line = start;
      if (m_record_too_long) {
        item.state = too_long_error(start);
        return item;
      }
      if (fields->size() <= m_last_needed) {
        item.state = make_error(
            ErrorKind::invalid_input,
            "the row has " + std::to_string(fields->size()) + " fields; the header has more",
            "line " + std::to_string(start));
        return item;
      }
      item.id = Json((*fields)[static_cast<std::size_t>(m_id_column)]);
      item.state = state_of(*fields, start);
      for (std::size_t column : m_extra_columns)
        item.extra.push_back(column < fields->size() ? (*fields)[column] : std::string());
      const auto image = static_cast<std::size_t>(m_image_column);
      if (m_image_column >= 0 && image < fields->size()) item.image = (*fields)[image];
      item.columns = std::move(fields).value();
      return item;
    }
  }

  std::vector<std::string> header() const override { return m_header; }

  /// What the header has, for an error about a column it lacks (the first few, each cut short:
  /// a header row may be anything).
  std::string columns_found() const {
    constexpr std::size_t shown = 12;
    constexpr std::size_t longest = 40;
    std::string list;
    for (std::size_t i = 0; i < m_header.size() && i < shown; ++i) {
      const std::string& name = m_header[i];
      list += (i ? ", \"" : "\"") +
              (name.size() > longest ? name.substr(0, longest) + "..." : name) + "\"";
    }
    if (m_header.size() > shown) list += ", ... (" + std::to_string(m_header.size()) + " in all)";
    return "the header has " + (m_header.empty() ? std::string("no columns") : list);
  }

 private:
  std::optional<std::vector<std::string>> record() {
    Line read;
    if (!read_line(m_in, read, max_input_line)) return std::nullopt;
    ++m_line;
    m_record_too_long = read.too_long;
    std::string line = std::move(read.text);
    std::size_t record_bytes = line.size();
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0;; ++i) {
      if (i == line.size()) {
        if (!quoted) break;
        Line more;
        // An unterminated quote takes what there is. A record past the cap is still read to
        // its end, so the next record starts where it should, but its fields are dropped.
        if (!read_line(m_in, more, max_input_line)) break;
        ++m_line;
        record_bytes += more.text.size();
        m_record_too_long = m_record_too_long || more.too_long || record_bytes > max_input_line;
        if (m_record_too_long) fields.assign(1, std::string());
        fields.back() += '\n';
        line = std::move(more.text);
        i = static_cast<std::size_t>(-1);
        continue;
      }
      const char c = line[i];
      if (quoted) {
        if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          fields.back() += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          fields.back() += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == m_separator) {
        fields.emplace_back();
      } else if (!(c == '\r' && i + 1 == line.size())) {
        fields.back() += c;
      }
    }
    return fields;
  }

  /// The state column as text, or the --state-columns as one JSON object in their order.
  Result<State> state_of(const std::vector<std::string>& fields, std::size_t line) const {
    if (m_state_columns.empty()) {
      return State::text(fields[static_cast<std::size_t>(m_state_column)]);
    }
    Json object = Json::object();
    bool all_blank = true;
    for (const auto& [name, column] : m_state_columns) {
      const std::string value = column < fields.size() ? fields[column] : std::string();
      all_blank &= value.find_first_not_of(" \t\r\n") == std::string::npos;
      object[name] = value;
    }
    if (all_blank) {
      return make_error(ErrorKind::invalid_input,
                        "the state is empty: every --state-columns "
                        "column is blank",
                        "line " + std::to_string(line));
    }
    auto state = State::from_json_value(object);
    if (!state) {
      Error error = state.error();
      error.where = "line " + std::to_string(line);
      return error;
    }
    return state;
  }

  std::istream& m_in;
  char m_separator;
  std::size_t m_line = 0;
  int m_id_column = -1;
  int m_state_column = -1;
  std::size_t m_last_needed = 0;   ///< The highest column index a row must have.
  bool m_record_too_long = false;  ///< The last record() passed max_input_line and was cut.
  std::vector<std::string> m_header;
  std::vector<std::pair<std::string, std::size_t>> m_state_columns;
  std::vector<std::size_t> m_extra_columns;
  int m_image_column = -1;
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
  context.err << "clef: note: reading " << path << " as " << to_string(format) << " (" << why
              << "); --input-format sets the format\n";
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
      auto reader = std::make_unique<DelimitedReader>(in, format == InputFormat::csv ? ',' : '\t');
      if (auto status = reader->read_header(fields); !status) return status.error();
      return std::unique_ptr<InputReader>(std::move(reader));
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
    for (std::streamsize i = 0; i < file.gcount(); ++i) lines += buffer[i] == '\n';
  }
  return lines;
}

}  // namespace clef::cli
