// clef: what a decision cost, and how clef knows — measured by the server, computed from its
// token counts and a price, or not known (never shown as 0).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/backend.hpp"
#include "clef/export.hpp"

namespace clef {

/// Where a Cost came from, in the order clef prefers them.
enum class CostSource {
  unknown,   ///< The server said nothing and no price is known for the model.
  header,    ///< Measured: the server's own figure in a header (Workers AI's cf-ai-neurons).
  body,      ///< Measured: the server's own figure in the answer (usage.neurons, usage.cost).
  computed,  ///< Token counts × a price (the built-in table or ClientOptions::prices).
  cached,    ///< Answered from clef's cache: nothing was spent for it now.
};

/// "unknown", "header", "body", "computed", "cached".
CLEF_API std::string_view to_string(CostSource source) noexcept;
/// The inverse of to_string; nullopt for any other text.
CLEF_API std::optional<CostSource> cost_source_from_string(std::string_view text) noexcept;

/// What one decision cost, in US dollars. Workers AI bills neurons: their count is kept when
/// the server said it, and dollars are neurons × the neuron price (the daily free allocation is
/// not subtracted: clef cannot know what else spent it). A provider's own bill is the truth;
/// this is what the server reported, or a computation from published prices.
struct Cost {
  std::optional<double> usd;  ///< nullopt when unknown: never 0 by default.
  CostSource source = CostSource::unknown;
  std::optional<double> neurons;  ///< Workers AI's measured neurons, when it said.
  /// A cache hit (source cached, $0 now): what the answer cost when it was sent, as the server
  /// then said (or tokens × price), when that is known; estimates and comparisons price it so.
  std::optional<double> sent_usd;

  bool known() const noexcept { return usd.has_value(); }
};

/// A price in US dollars per million tokens (output tokens are free at some providers).
struct Price {
  double input_per_million = 0;
  double output_per_million = 0;

  /// What `input_tokens` and `output_tokens` cost at this price, in dollars.
  double dollars_for(double input_tokens, double output_tokens) const noexcept {
    return (input_tokens * input_per_million + output_tokens * output_per_million) / 1e6;
  }
};

/// One row of clef's built-in price table: what it matches, its price, and where and when the
/// price was read (prices change: ClientOptions::prices and `--price` override a row).
struct PriceRow {
  Backend backend;
  std::string model_prefix;  ///< Matches a model name that starts with it ("" matches any).
  Price price;
  std::string as_of;   ///< The date the price was read, YYYY-MM-DD.
  std::string source;  ///< Where: a page or a document.
};

/// The built-in table, most specific rows first.
CLEF_API const std::vector<PriceRow>& built_in_prices();

/// Workers AI's price of a neuron in US dollars ($0.011 per 1,000), and its free allocation a day.
inline constexpr double kDollarsPerNeuron = 0.011 / 1000.0;
inline constexpr double kFreeNeuronsPerDay = 10000;

/// The price that applies to `model` on `backend`: an override by exact model name first, else
/// the first built-in row that matches; nullopt when none does.
CLEF_API std::optional<Price> price_for(Backend backend, std::string_view model,
                                        const std::map<std::string, Price>& overrides);

}  // namespace clef
