// clef: what a run will cost, said before it spends — a seeded sample of the items decided, and
// the rest extrapolated by the size of each request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "clef/batch.hpp"
#include "clef/export.hpp"

namespace clef {

struct EstimateOptions {
  /// Items decided for the estimate: a random sample of the input, all of it when it has fewer.
  std::size_t sample = 20;
  /// The sample's seed: the same input and seed choose the same items, on every machine.
  std::uint64_t seed = 1;
  /// Count a request body seen before once, as run_batch with BatchOptions::dedupe sends it.
  bool dedupe = false;
  /// How the sample is sent (concurrency, cancel, should_stop): run_batch's options.
  BatchOptions batch;
};

/// What estimate_cost found. Dollars, as Decision::cost reports them (a provider's bill is the
/// truth; this is what its servers said, or tokens × a price).
struct CostEstimate {
  std::size_t items = 0;    ///< Items the source gave that would be sent (bad ones left out).
  std::size_t sampled = 0;  ///< Of them, sent for the estimate.
  std::size_t priced = 0;   ///< Sampled decisions whose cost is known.
  std::size_t unknown = 0;  ///< Sampled decisions whose cost no one knows (a price is missing).
  std::size_t failed = 0;   ///< Sampled items that failed: left out of the estimate.
  std::size_t bad = 0;      ///< Items the source gave as errors, or that cannot be sent.
  std::size_t repeats = 0;  ///< With dedupe: items whose body was seen before (not counted).
  std::optional<Error> first_failure;
  double sample_usd = 0;  ///< What the priced sample cost.
  /// The whole input's cost, nullopt when no sampled cost is known. The largest items (a quarter
  /// of the sample) are decided whatever the draw, their cost counted as it is; the rest is
  /// estimated from a random sample of the other items by a regression on the size of each
  /// request body (a fee per request plus a price per byte: cost follows tokens, tokens what is
  /// sent), or by its ratio to size when the sample is too small or its sizes all alike.
  std::optional<double> usd;
  /// A 95 % interval around usd: Student's t over the sample's residuals, with the finite
  /// population correction, never narrower than a billionth of usd either side (binary noise);
  /// that narrow when every item was decided, and from the largest items' own cost to it plus
  /// twice the rest's estimate when one priced decision of the rest is all there is to go on. It
  /// holds for the items that could be drawn: an input whose cost hides in a few items the sample
  /// missed can be outside.
  double low_usd = 0;
  double high_usd = 0;
};

/// Reads the whole source (each item serialized once, to learn its size; only the sample is
/// kept: the largest items, and a reservoir sample of the rest), decides the sample with
/// run_batch (options.batch: its max_cost_usd caps the sample's spend too) and extrapolates its
/// cost to every item. A cache hit costs nothing now, but is priced as it was when sent
/// (Client::cost_if_sent), so that a warm cache does not make the estimate $0. Bad items (an
/// Error from the source, a request that cannot be sent) are counted out, as the run would not
/// pay for them (`bad` says how many).
CLEF_API CostEstimate estimate_cost(const Client& client, const RequestSource& source,
                                    const EstimateOptions& options = {});

}  // namespace clef
