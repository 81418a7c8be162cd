// The implementation of price_flag.hpp.
#include "flags/price_flag.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

namespace clef::cli {
std::optional<double> dollars_from_text(std::string_view text, double most) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || !std::isfinite(value) || value < 0 || value > most)
    return std::nullopt;
  return value + 0.0;  // -0 is 0
}

namespace {

/// Dollars per million tokens: from 0 to a million.
std::optional<double> dollars(std::string_view text) {
  return dollars_from_text(text, 1e6);
}

Error bad_price(const std::string& value, const std::string& why, const std::string& where) {
  return make_error(ErrorKind::invalid_input,
                    (where == "--price" ? "--price " : "") + value + ": " + why +
                        " (the form is MODEL=INPUT[,OUTPUT], dollars per million tokens, as in "
                        "--price clef-flash=0.09)",
                    where);
}

/// One MODEL=INPUT[,OUTPUT] into `prices` (`where` names it in the error).
Status add_price(const std::string& value, const std::string& where,
                 std::map<std::string, Price>& prices) {
  const auto equals = value.find('=');
  if (equals == std::string::npos || equals == 0) return bad_price(value, "no model named", where);
  const std::string model = value.substr(0, equals);
  const std::string_view amounts = std::string_view(value).substr(equals + 1);
  const auto comma = amounts.find(',');
  const auto input = dollars(amounts.substr(0, comma));
  const auto output = comma == std::string_view::npos ? std::optional<double>(0)
                                                      : dollars(amounts.substr(comma + 1));
  if (!input || !output)
    return bad_price(value, "a price is a number of dollars from 0 to 1000000", where);
  if (!prices.emplace(model, Price{*input, *output}).second)
    return bad_price(value, "the model " + model + " is priced twice", where);
  return {};
}

}  // namespace

Result<std::map<std::string, Price>> parse_prices(const std::vector<std::string>& values) {
  std::map<std::string, Price> prices;
  for (const std::string& value : values) {
    if (auto status = add_price(value, "--price", prices); !status) return status.error();
  }
  return prices;
}

Result<std::map<std::string, Price>> parse_price_file(std::string_view text,
                                                      const std::string& path) {
  std::map<std::string, Price> prices;
  std::size_t number = 0;
  // A UTF-8 byte order mark (an editor's) is not part of the first model's name.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    // White space is only layout here ("clef-flash = 0.09, 0"): a model name has none.
    std::string row;
    for (const char c : line)
      if (c != ' ' && c != '\t' && c != '\r') row += c;
    if (row.empty() || row.front() == '#') continue;
    const std::string where = path + ": line " + std::to_string(number);
    if (auto status = add_price(row, where, prices); !status) return status.error();
  }
  return prices;
}

}  // namespace clef::cli
