// The implementation of delimited_input.hpp: CSV and TSV items, one record at a time.
#include "batch/delimited_input.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "clef/json.hpp"
#include "common/input_file.hpp"
#include "common/terminal_text.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

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
    for (const auto& name : fields.state_columns) {
      auto column = required_column(name, "--state-columns");
      if (!column) return column.error();
      m_state_columns.emplace_back(name, column.value());
    }
    for (const auto& name : fields.extra) {
      auto column = required_column(name, "--label");
      if (!column) return column.error();
      m_extra_columns.push_back(column.value());
    }
    if (!fields.image.empty()) {
      auto column = required_column(fields.image, "--image-field");
      if (!column) return column.error();
      m_image_column = static_cast<int>(column.value());
    }
    if (!m_state_columns.empty()) {
      m_state_column = static_cast<int>(m_state_columns[0].second);
    } else {
      auto column = required_column(fields.state, "--state-field", true);
      if (!column) return column.error();
      m_state_column = static_cast<int>(column.value());
    }
    auto id = required_column(fields.id, "--id-field", true);
    if (!id) return id.error();
    m_id_column = static_cast<int>(id.value());
    m_last_needed = static_cast<std::size_t>(std::max(m_id_column, m_state_column));
    for (const auto& column : m_state_columns)
      m_last_needed = std::max(m_last_needed, column.second);
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
        item.state = line_too_long(start);
        return item;
      }
      if (m_unclosed_quote) {
        item.state = make_error(ErrorKind::invalid_input,
                                "a quoted field opened in this row is not closed before the end "
                                "of the input (every line after it was read into that field)",
                                "line " + std::to_string(start));
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

  /// The column the header names `name` (for `flag`): refused when there is none, or two
  /// (which one is meant cannot be told, and a silent pick would send the wrong field).
  Result<std::size_t> required_column(const std::string& name, const char* flag,
                                      bool list_columns = false) const {
    std::optional<std::size_t> found;
    for (std::size_t i = 0; i < m_header.size(); ++i) {
      if (m_header[i] != name) continue;
      if (found) {
        return make_error(ErrorKind::invalid_input,
                          "the header has two \"" + name + "\" columns (" + flag +
                              "): which one is meant cannot be told",
                          "line 1");
      }
      found = i;
    }
    if (found) return *found;
    return make_error(ErrorKind::invalid_input,
                      "the header has no \"" + name + "\" column (" + flag + ")" +
                          (list_columns ? "; " + columns_found() : std::string()),
                      "line 1");
  }

  /// What the header has, for an error about a column it lacks (the first few, each cut short:
  /// a header row may be anything).
  std::string columns_found() const {
    constexpr std::size_t shown = 12;
    constexpr std::size_t longest = 40;
    std::string list;
    for (std::size_t i = 0; i < m_header.size() && i < shown; ++i) {
      const std::string name = terminal_safe_line(m_header[i]);  // a header may hold anything
      list += (i ? ", \"" : "\"") +
              (name.size() > longest ? name.substr(0, longest) + "..." : name) + "\"";
    }
    if (m_header.size() > shown) list += ", ... (" + std::to_string(m_header.size()) + " in all)";
    return "the header has " + (m_header.empty() ? std::string("no columns") : list);
  }

 private:
  std::optional<std::vector<std::string>> record() {
    Line read;
    if (!InputFile::read_line(m_in, read, max_input_line)) return std::nullopt;
    ++m_line;
    m_record_too_long = read.too_long;
    std::string line = std::move(read.text);
    std::size_t record_bytes = line.size();
    std::vector<std::string> fields(1);
    bool quoted = false;
    // A quote opens a quoted field only as its first character (RFC 4180); elsewhere it is the
    // text's own (`a 27" monitor`), as spreadsheets read it.
    bool at_field_start = true;
    m_unclosed_quote = false;
    for (std::size_t i = 0;; ++i) {
      if (i == line.size()) {
        if (!quoted) break;
        Line more;
        // A record past the cap is still read to its end, so the next record starts where it
        // should, but its fields are dropped. A quote still open at the end is said.
        if (!InputFile::read_line(m_in, more, max_input_line)) {
          if (m_in.bad()) return std::nullopt;  // cut off by a failed or interrupted read
          m_unclosed_quote = true;
          break;
        }
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
      } else if (c == '"' && at_field_start) {
        quoted = true;
      } else if (c == m_separator) {
        fields.emplace_back();
        at_field_start = true;
        continue;
      } else if (!(c == '\r' && i + 1 == line.size())) {
        fields.back() += c;
      }
      at_field_start = false;
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
  bool m_unclosed_quote = false;   ///< The last record() ended inside a quoted field.
  std::vector<std::string> m_header;
  std::vector<std::pair<std::string, std::size_t>> m_state_columns;
  std::vector<std::size_t> m_extra_columns;
  int m_image_column = -1;
};

}  // namespace

Result<std::unique_ptr<InputReader>> make_delimited_reader(std::istream& in, char separator,
                                                           const InputFields& fields) {
  auto reader = std::make_unique<DelimitedReader>(in, separator);
  if (auto status = reader->read_header(fields); !status) return status.error();
  return std::unique_ptr<InputReader>(std::move(reader));
}

}  // namespace clef::cli
