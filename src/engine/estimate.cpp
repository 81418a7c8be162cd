// The implementation of clef/estimate.hpp: the largest items and a reservoir sample of the rest,
// decided; the rest's cost extrapolated by a regression on the size of each request body.
#include "clef/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_set>
#include <utility>
#include <vector>

#include "util/sha256_bytes.hpp"

namespace clef {
namespace {

/// A sampled item: its request and the size of its body.
struct Sampled {
  DecisionRequest request;
  double bytes = 0;
};

/// For std::push_heap: the smallest of the largest on top.
bool larger(const Sampled& a, const Sampled& b) {
  return a.bytes > b.bytes;
}

/// One pass over the source: the `top` largest items (where a skewed input hides its cost) and a
/// uniform sample of the others (Algorithm R; an item pushed out of the largest joins them then,
/// which keeps the sample uniform over whatever ends up outside). The draw is mt19937_64's,
/// reduced with %, so it is the same on every standard library.
class Sampler {
 public:
  explicit Sampler(const EstimateOptions& options)
      : m_top(options.sample / 4),
        m_rest(options.sample - options.sample / 4),
        m_draw(options.seed) {}

  void add(Sampled&& item) {
    if (largest.size() < m_top) {
      largest.push_back(std::move(item));
      std::push_heap(largest.begin(), largest.end(), larger);
      return;
    }
    if (m_top > 0 && item.bytes > largest.front().bytes) {
      std::pop_heap(largest.begin(), largest.end(), larger);
      std::swap(largest.back(), item);
      std::push_heap(largest.begin(), largest.end(), larger);
    }
    offer_to_rest(std::move(item));
  }

  std::vector<Sampled> largest;  ///< A heap by size, its smallest on top.
  std::vector<Sampled> kept;     ///< The uniform sample of the others.
  std::size_t rest_items = 0;
  double rest_bytes = 0;

 private:
  void offer_to_rest(Sampled&& item) {
    const std::size_t seen = rest_items++;
    rest_bytes += item.bytes;
    if (kept.size() < m_rest) {
      kept.push_back(std::move(item));
    } else if (m_rest > 0) {
      const std::size_t slot = static_cast<std::size_t>(m_draw() % (seen + 1));
      if (slot < m_rest) kept[slot] = std::move(item);
    }
  }

  const std::size_t m_top;
  const std::size_t m_rest;
  std::mt19937_64 m_draw;
};

/// Reads the whole source into `sampler`, counting what would be sent in `estimate`.
void read_all(const Client& client, const RequestSource& source, const EstimateOptions& options,
              Sampler& sampler, CostEstimate& estimate) {
  std::unordered_set<detail::Sha256, detail::Sha256Hash> seen;
  while (std::optional<Result<DecisionRequest>> item = source()) {
    auto body = *item ? client.request_body(item->value()) : Result<std::string>(item->error());
    if (!body) {
      ++estimate.bad;  // never sent, so never paid for
      continue;
    }
    if (options.dedupe && !seen.insert(detail::sha256(body.value())).second) {
      ++estimate.repeats;  // answered by its first
      continue;
    }
    ++estimate.items;
    sampler.add({std::move(item->value()), static_cast<double>(body->size())});
  }
}

/// Student's t at 97.5 % for `df` degrees of freedom (a table to 30, then 1.96 + 2.4 / df).
double t_quantile(std::size_t df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df >= 1 && df <= 30) return table[df - 1];
  return 1.96 + 2.4 / static_cast<double>(df);
}

/// Cost as a fee plus a price per byte, fitted to (dollars, bytes) pairs: least squares when
/// there are 3 or more of different sizes, else through zero (a ratio).
struct Fit {
  double fee = 0;
  double per_byte = 0;
  double squares = 0;  ///< Of the residuals.
  std::size_t df = 0;  ///< Their degrees of freedom.

  double at(double bytes) const { return fee + per_byte * bytes; }
};

Fit fit(const std::vector<std::pair<double, double>>& pairs) {
  Fit model;
  const double n = static_cast<double>(pairs.size());
  double cost = 0, bytes = 0;
  for (const auto& [usd, size] : pairs) cost += usd, bytes += size;
  double sxx = 0, sxy = 0;
  for (const auto& [usd, size] : pairs) {
    sxx += (size - bytes / n) * (size - bytes / n);
    sxy += (size - bytes / n) * (usd - cost / n);
  }
  if (pairs.size() >= 3 && sxx > 0) {
    model.per_byte = sxy / sxx;
    model.fee = cost / n - model.per_byte * bytes / n;
    model.df = pairs.size() - 2;
  } else {
    model.per_byte = bytes > 0 ? cost / bytes : 0;
    model.df = pairs.size() - 1;
  }
  for (const auto& [usd, size] : pairs) model.squares += std::pow(usd - model.at(size), 2);
  return model;
}

/// usd and its interval: the largest items' own cost, the rest extrapolated from its sample.
void extrapolate(const std::vector<std::pair<double, double>>& largest,
                 const std::vector<double>& unpriced_sizes,
                 const std::vector<std::pair<double, double>>& rest, const Sampler& sampler,
                 CostEstimate& estimate) {
  double exact = 0;
  for (const auto& pair : largest) exact += pair.first;
  estimate.sample_usd = exact;
  for (const auto& pair : rest) estimate.sample_usd += pair.first;
  if (estimate.items == 0) {  // nothing to send costs nothing
    estimate.usd = 0.0;
    return;
  }
  const std::vector<std::pair<double, double>>& basis = rest.empty() ? largest : rest;
  if (basis.empty()) return;
  const Fit model = fit(basis);
  for (const double size : unpriced_sizes) exact += std::max(0.0, model.at(size));
  const double all = static_cast<double>(sampler.rest_items);
  const double rest_total = std::max(0.0, model.fee * all + model.per_byte * sampler.rest_bytes);
  const double total = exact + rest_total;
  estimate.usd = total;
  const double n = static_cast<double>(rest.size());
  // Sums of dollars carry binary noise: the interval is never narrower than a billionth of the
  // total, so a cost the fit follows exactly is not left just outside it by rounding.
  const double noise = total * 1e-9;
  if (rest.size() >= sampler.rest_items) {  // every item decided (or priced from the largest)
    estimate.low_usd = std::max(0.0, total - noise);
    estimate.high_usd = total + noise;
    return;
  }
  if (rest.empty() || model.df == 0) {  // one decision says nothing of the spread
    estimate.low_usd = exact;
    estimate.high_usd = exact + 2 * rest_total;
    return;
  }
  const double spread = model.squares / static_cast<double>(model.df);
  const double half = t_quantile(model.df) * std::sqrt(all * all * (1 - n / all) * spread / n);
  estimate.low_usd = std::max(0.0, std::min(total - noise, std::max(exact, total - half)));
  estimate.high_usd = total + std::max(half, noise);
}

}  // namespace

CostEstimate estimate_cost(const Client& client, const RequestSource& source,
                           const EstimateOptions& options) {
  CostEstimate estimate;
  Sampler sampler(options);
  read_all(client, source, options, sampler, estimate);
  std::vector<DecisionRequest> requests;
  for (Sampled& item : sampler.largest) requests.push_back(std::move(item.request));
  for (Sampled& item : sampler.kept) requests.push_back(std::move(item.request));
  estimate.sampled = requests.size();
  const std::vector<Result<Decision>> results = decide_all(client, requests, options.batch);
  std::vector<std::pair<double, double>> largest, rest;
  std::vector<double> unpriced_sizes;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const bool of_largest = i < sampler.largest.size();
    const double bytes =
        of_largest ? sampler.largest[i].bytes : sampler.kept[i - sampler.largest.size()].bytes;
    std::optional<double> usd;
    if (!results[i]) {
      ++estimate.failed;
      if (!estimate.first_failure) estimate.first_failure = results[i].error();
    } else if (!(usd = client.cost_if_sent(results[i].value()).usd)) {
      ++estimate.unknown;
    }
    if (usd)
      (of_largest ? largest : rest).emplace_back(*usd, bytes);
    else if (of_largest)
      unpriced_sizes.push_back(bytes);  // priced by the fit, as the run would pay for it
  }
  estimate.priced = largest.size() + rest.size();
  extrapolate(largest, unpriced_sizes, rest, sampler, estimate);
  return estimate;
}

}  // namespace clef
