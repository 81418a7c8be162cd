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
  std::optional<Error> first_failure;
  double sample_usd = 0;  ///< What the priced sample cost.
  /// The whole input's cost, nullopt when no sampled cost is known: the priced sample's dollars
  /// per byte of request body, times the bytes of every item's body (a ratio estimator: cost
  /// follows tokens, and tokens the size of what is sent).
  std::optional<double> usd;
  /// A 95 % interval around usd (the ratio estimator's normal approximation, with the finite
  /// population correction): equal to it when every item was sampled, and as wide as usd on
  /// either side when one priced decision is all there is to go on.
  double low_usd = 0;
  double high_usd = 0;
};

/// Reads the whole source (each item serialized once, to learn its size; only the sample is
/// kept, by reservoir sampling), decides the sample with run_batch and extrapolates its cost
/// to every item. A cache hit costs nothing now, but is priced from its token counts where the
/// client has a price, so that a warm cache does not make the estimate $0. Bad items (an Error
/// from the source, a request that cannot be sent) are counted out, as the run would not pay for
/// them.
CLEF_API CostEstimate estimate_cost(const Client& client, const RequestSource& source,
                                    const EstimateOptions& options = {});

}  // namespace clef
