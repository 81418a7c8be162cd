// The implementation of clef/cost.hpp and wire/cost.hpp: the dated price table, and a decision's
// cost from what its server measured (a header, then the body) or from its tokens × a price.
#include "clef/cost.hpp"

#include <charconv>
#include <cmath>

#include "wire/backend_wire.hpp"
#include "wire/cost.hpp"

namespace clef {
namespace {

/// A measured figure clef believes: a finite number, not negative, and not absurd (a billion
/// neurons or dollars for one decision is a server's bug or a lie, not a bill).
std::optional<double> plausible(double value) {
  if (!std::isfinite(value) || value < 0 || value > 1e9) return std::nullopt;
  return value + 0.0;  // -0 is 0
}

/// `usd` to a millionth of a millionth of a dollar: no binary noise (4.859999999999999e-06) in
/// a result line.
double to_picodollars(double usd) {
  return std::round(usd * 1e12) / 1e12;
}

double neuron_dollars(double neurons) {
  return to_picodollars(neurons * kDollarsPerNeuron);
}

/// A header's number ("1.43"), or nullopt for anything else (text, two numbers, spaces inside).
std::optional<double> header_number(const std::string& text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return plausible(value);
}

/// The model name without the provider's path ("@cf/cloudflare/clef-flash" → "clef-flash",
/// "typesafe/jev-1.14" → "jev-1.14"), as the table's rows name models.
std::string_view bare_model(std::string_view model) {
  const auto slash = model.rfind('/');
  return slash == std::string_view::npos ? model : model.substr(slash + 1);
}

}  // namespace

std::string_view to_string(CostSource source) noexcept {
  switch (source) {
    case CostSource::header:
      return "header";
    case CostSource::body:
      return "body";
    case CostSource::computed:
      return "computed";
    case CostSource::cached:
      return "cached";
    case CostSource::unknown:
      break;
  }
  return "unknown";
}

std::optional<CostSource> cost_source_from_string(std::string_view text) noexcept {
  for (CostSource source : {CostSource::unknown, CostSource::header, CostSource::body,
                            CostSource::computed, CostSource::cached}) {
    if (to_string(source) == text) return source;
  }
  return std::nullopt;
}

const std::vector<PriceRow>& built_in_prices() {
  // Prices change: each row says when and where it was read. Workers AI measures every request
  // in neurons (cf-ai-neurons), which wins over this row whenever the server sends it.
  static const std::vector<PriceRow> rows = {
      {Backend::workers_ai,
       "clef-flash",
       {0.09, 0.0},
       "2026-10-03",
       "Workers AI model page for @cf/cloudflare/clef-flash ($0.09 per million input tokens)"},
      {Backend::systemone,
       "jev",
       {0.042, 0.0},
       "2026-12-05",
       "TypeSafe's hosted Jev models ($0.042 per million input tokens; output tokens free), as "
       "recorded in clef's issue 32"},
      {Backend::ollama,
       "",
       {0.0, 0.0},
       "2026-12-05",
       "a local Ollama: nothing per request (the machine's own cost is not counted)"},
  };
  return rows;
}

std::optional<Price> price_for(Backend backend, std::string_view model,
                               const std::map<std::string, Price>& overrides) {
  if (const auto it = overrides.find(std::string(model)); it != overrides.end()) return it->second;
  const std::string_view bare = bare_model(model);
  if (const auto it = overrides.find(std::string(bare)); it != overrides.end()) return it->second;
  for (const PriceRow& row : built_in_prices()) {
    if (row.backend == backend && bare.substr(0, row.model_prefix.size()) == row.model_prefix)
      return row.price;
  }
  return std::nullopt;
}

namespace detail {

void read_body_cost(const Json& usage, Cost& cost) {
  if (const auto neurons = number_field(usage, "neurons"); neurons && plausible(*neurons)) {
    cost.neurons = *neurons;
    cost.usd = neuron_dollars(*neurons);
    cost.source = CostSource::body;
    return;
  }
  if (const auto dollars = number_field(usage, "cost"); dollars && plausible(*dollars)) {
    cost.usd = *dollars;
    cost.source = CostSource::body;
  }
}

namespace {

/// What the decision costs as sent: Workers AI's header, the body's figure (already in
/// decision.cost), tokens × price, else unknown.
Cost sent_cost(const Decision& decision, Backend backend, const HttpResponse& response,
               std::string_view model, const std::map<std::string, Price>& overrides) {
  if (auto measured = wire_of(backend).measured_cost(response)) return std::move(*measured);
  if (decision.cost.known()) return decision.cost;  // the body's own figure
  return token_cost(decision, backend, model, overrides);
}

}  // namespace

Cost token_cost(const Decision& decision, Backend backend, std::string_view model,
                const std::map<std::string, Price>& overrides) {
  const auto price = price_for(backend, model, overrides);
  if (!price) return Cost{};
  const double dollars = price->dollars_for(static_cast<double>(decision.usage.input_tokens),
                                            static_cast<double>(decision.usage.output_tokens));
  return Cost{to_picodollars(dollars), CostSource::computed, std::nullopt, std::nullopt};
}

std::optional<Cost> cf_ai_neurons_cost(const HttpResponse& response) {
  const auto neurons = header_number(response.header("cf-ai-neurons"));
  if (!neurons) return std::nullopt;
  return Cost{neuron_dollars(*neurons), CostSource::header, *neurons, std::nullopt};
}

std::optional<Cost> BackendWire::measured_cost(const HttpResponse&) const {
  return std::nullopt;
}

void settle_cost(Decision& decision, Backend backend, const HttpResponse& response,
                 std::string_view model, const std::map<std::string, Price>& overrides) {
  const Cost as_sent = sent_cost(decision, backend, response, model, overrides);
  // A cache hit spent nothing now; what it cost when sent (the cache keeps the answer whole) is
  // what the item costs where the cache does not hold it.
  decision.cost =
      response.from_cache ? Cost{0.0, CostSource::cached, std::nullopt, as_sent.usd} : as_sent;
}

}  // namespace detail
}  // namespace clef
