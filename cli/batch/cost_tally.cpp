// The implementation of cost_tally.hpp.
#include "batch/cost_tally.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "clef/decision_json.hpp"

namespace clef::cli {
namespace {

std::string dollars(double amount) {
  char buffer[48];
  // Small amounts keep two significant digits ($0.0000055), larger ones four decimals.
  int decimals = 4;
  if (amount > 0 && amount < 0.01)
    decimals = std::min(14, static_cast<int>(std::ceil(-std::log10(amount))) + 1);
  std::snprintf(buffer, sizeof buffer, "$%.*f", decimals, amount);
  return buffer;
}

std::size_t index_of(CostSource source) {
  return static_cast<std::size_t>(source);
}

}  // namespace

std::string dollars_in_message(double amount) {
  char text[32];
  std::snprintf(text, sizeof text, "$%.6g", amount);
  return text;
}

void KeptCost::add(const nlohmann::ordered_json& line, const ClientOptions& client) {
  if (!line.contains("answers")) return;  // an error line: taken to cost nothing
  const auto cost_field = line.find("cost");
  Cost cost = cost_field == line.end() ? Cost{} : cost_from_json(*cost_field);
  if (!cost.known()) {
    const auto usage = line.find("usage");
    const auto price = price_for(client.backend, client.model, client.prices);
    if (price && usage != line.end() && usage->is_object()) {
      const auto tokens = [&](const char* name) {
        const auto it = usage->find(name);
        return it != usage->end() && it->is_number() && it->get<double>() >= 0 ? it->get<double>()
                                                                               : 0.0;
      };
      cost.usd = price->dollars_for(tokens("input_tokens"), tokens("output_tokens"));
      cost.source = CostSource::computed;
    }
  }
  if (!cost.usd) {
    ++unknown;
    return;
  }
  spent.usd += *cost.usd;
  if (cost.source == CostSource::cached) return;
  spent.dearest_usd = std::max(spent.dearest_usd, *cost.usd);
  ++spent.decisions;
}

void CostTally::add(const Cost& cost) {
  if (!cost.usd) {
    ++m_unknown;
    return;
  }
  const double usd = *cost.usd;
  m_least = m_known == 0 ? usd : std::min(m_least, usd);
  m_most = m_known == 0 ? usd : std::max(m_most, usd);
  ++m_known;
  ++m_by_source[index_of(cost.source)];
  m_usd_by_source[index_of(cost.source)] += usd;
  m_total += usd;
  if (usd < kFloor) {
    ++m_zero;
    return;
  }
  const double position = std::log10(usd / kFloor) * kPerDecade;
  const auto bucket = static_cast<std::size_t>(
      std::clamp(position, 0.0, static_cast<double>(m_buckets.size() - 1)));
  ++m_buckets[bucket];
}

double CostTally::percentile(double fraction) const {
  const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(m_known)));
  std::size_t seen = m_zero;
  if (rank <= seen) return 0;
  for (std::size_t bucket = 0; bucket < m_buckets.size(); ++bucket) {
    seen += m_buckets[bucket];
    if (seen >= rank)  // the bucket's middle, on the log scale
      return kFloor * std::pow(10.0, (static_cast<double>(bucket) + 0.5) / kPerDecade);
  }
  return kFloor * std::pow(10.0, static_cast<double>(kDecades));
}

void CostTally::print(std::ostream& err, const std::string& model) const {
  if (m_known + m_unknown == 0 || (m_unknown == 0 && m_total == 0)) return;  // free, or none
  if (m_known > 0) {
    err << "clef:   cost: " << dollars(m_total) << " in all, "
        << dollars(m_total / static_cast<double>(m_known)) << " a decision on average, "
        << dollars(std::clamp(percentile(0.95), m_least, m_most)) << " at the 95th percentile;";
    const char* separator = " ";
    const auto part = [&](CostSource source, const char* what) {
      const std::size_t n = m_by_source[index_of(source)];
      if (n == 0) return;
      err << separator << n << " " << what << " (" << dollars(m_usd_by_source[index_of(source)])
          << ")";
      separator = ", ";
    };
    part(CostSource::header, "measured by the server (header)");
    part(CostSource::body, "measured by the server (answer)");
    part(CostSource::computed, "computed from tokens x price");
    part(CostSource::cached, "from the cache, at no cost");
    err << "\n";
  }
  if (m_unknown > 0) {
    err << "clef:   cost: unknown for " << m_unknown
        << " decision(s): the server measured none and clef has no price for " << model
        << " (give --price " << model << "=INPUT[,OUTPUT], dollars per million tokens); "
        << "they are not in the total\n";
  }
}

}  // namespace clef::cli
