// The implementation of clef/estimate.hpp: a reservoir sample of the source, decided, and its
// cost extrapolated to every item by the size of its request body (a ratio estimator).
#include "clef/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace clef {
namespace {

/// A sampled item: its request and the size of its body.
struct Sampled {
  DecisionRequest request;
  double bytes = 0;
};

/// What the source holds: how many items would be sent, their bodies' bytes in all, and up to
/// `size` of them chosen at random (Algorithm R: each item kept with the same chance, one pass,
/// only the sample held). The draw is mt19937_64's, reduced with %, so it is the same on every
/// standard library.
struct Reservoir {
  std::size_t items = 0;
  double bytes = 0;
  std::vector<Sampled> kept;
};

Reservoir sample_of(const Client& client, const RequestSource& source,
                    const EstimateOptions& options) {
  Reservoir reservoir;
  std::mt19937_64 draw(options.seed);
  while (std::optional<Result<DecisionRequest>> item = source()) {
    if (!*item) continue;  // a bad item is never sent, so never paid for
    auto body = client.request_body(item->value());
    if (!body) continue;
    const double bytes = static_cast<double>(body->size());
    const std::size_t seen = reservoir.items++;
    reservoir.bytes += bytes;
    if (reservoir.kept.size() < options.sample) {
      reservoir.kept.push_back({std::move(item->value()), bytes});
    } else if (options.sample > 0) {
      const std::size_t slot = static_cast<std::size_t>(draw() % (seen + 1));
      if (slot < options.sample) reservoir.kept[slot] = {std::move(item->value()), bytes};
    }
  }
  return reservoir;
}

/// The ratio estimate of the total and its 95 % interval from priced (cost, bytes) pairs.
void extrapolate(const std::vector<std::pair<double, double>>& priced, const Reservoir& reservoir,
                 CostEstimate& estimate) {
  double cost = 0;
  double bytes = 0;
  for (const auto& [usd, size] : priced) {
    cost += usd;
    bytes += size;
  }
  estimate.sample_usd = cost;
  if (reservoir.items == 0) {  // nothing to send costs nothing
    estimate.usd = 0.0;
    return;
  }
  if (priced.empty() || bytes <= 0) return;
  const double ratio = cost / bytes;
  const double total = ratio * reservoir.bytes;
  estimate.usd = total;
  const double n = static_cast<double>(priced.size());
  const double all = static_cast<double>(reservoir.items);
  if (priced.size() >= reservoir.items) {  // every item decided: nothing to extrapolate
    estimate.low_usd = estimate.high_usd = total;
    return;
  }
  if (priced.size() < 2) {  // one decision says nothing of the spread
    estimate.low_usd = 0;
    estimate.high_usd = 2 * total;
    return;
  }
  double squares = 0;
  for (const auto& [usd, size] : priced) squares += (usd - ratio * size) * (usd - ratio * size);
  const double spread = squares / (n - 1);
  const double half = 1.96 * std::sqrt(all * all * (1 - n / all) * spread / n);
  estimate.low_usd = std::max(0.0, total - half);
  estimate.high_usd = total + half;
}

}  // namespace

CostEstimate estimate_cost(const Client& client, const RequestSource& source,
                           const EstimateOptions& options) {
  Reservoir reservoir = sample_of(client, source, options);
  CostEstimate estimate;
  estimate.items = reservoir.items;
  estimate.sampled = reservoir.kept.size();
  std::vector<DecisionRequest> requests;
  requests.reserve(reservoir.kept.size());
  for (Sampled& sampled : reservoir.kept) requests.push_back(std::move(sampled.request));
  const std::vector<Result<Decision>> results = decide_all(client, requests, options.batch);
  std::vector<std::pair<double, double>> priced;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i]) {
      ++estimate.failed;
      if (!estimate.first_failure) estimate.first_failure = results[i].error();
      continue;
    }
    // A cache hit spent nothing now; the run pays for items the cache does not hold.
    if (const std::optional<double> usd = client.cost_if_sent(results[i].value()).usd)
      priced.emplace_back(*usd, reservoir.kept[i].bytes);
    else
      ++estimate.unknown;
  }
  estimate.priced = priced.size();
  extrapolate(priced, reservoir, estimate);
  return estimate;
}

}  // namespace clef
