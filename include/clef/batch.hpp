// clef: many decisions with bounded concurrency over reused connections.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "clef/client.hpp"

namespace clef {

struct BatchOptions {
  /// Requests in flight at once (each worker keeps its own keep-alive connection).
  std::size_t concurrency = 4;
  /// Cap on requests started per second across all workers; 0 = no cap.
  double max_requests_per_second = 0;
  /// Deliver results in input order (a bounded window of finished results is held back).
  bool ordered = false;
  /// Send identical request bodies once and give every duplicate the same result.
  bool dedupe = false;
  /// 429 and 503 pause every worker (for Retry-After, or a growing backoff) and the item is sent
  /// again: they never fail an item until it has waited this long in all.
  std::chrono::milliseconds throttle_budget{600'000};
  /// When it turns true, no new item is started; items in flight finish. Pair with
  /// ClientOptions::cancel to stop those too.
  const std::atomic<bool>* stop = nullptr;
};

/// Pulls the next request; std::nullopt ends the input. An item that is already known to be bad
/// (an unparsable input line) is yielded as an Error and delivered in sequence like any result.
/// Called from one thread at a time.
using RequestSource = std::function<std::optional<Result<DecisionRequest>>()>;
/// Receives each result with its input index (0-based). Called from one thread at a time,
/// never concurrently, so it may write to a file without locking.
using ResultSink = std::function<void(std::size_t index, Result<Decision>&& result)>;

struct BatchSummary {
  std::size_t started = 0;       ///< Items taken from the source.
  std::size_t succeeded = 0;     ///< Delivered with a Decision.
  std::size_t failed = 0;        ///< Delivered with an Error.
  std::size_t deduplicated = 0;  ///< Delivered from an identical earlier request.
  std::size_t throttled = 0;     ///< 429/503 responses that paused the batch.
  bool stopped = false;          ///< BatchOptions::stop ended the run early.
};

/// The streaming engine behind decide_all and `clef batch`: memory stays flat however long
/// the input, since only the items in flight (and, when ordered, a bounded window) are held.
BatchSummary run_batch(const Client& client, const RequestSource& source, const ResultSink& sink,
                       const BatchOptions& options = {});

/// One result per request, in the same order.
///
///     auto results = clef::decide_all(client, requests, {.concurrency = 8});
std::vector<Result<Decision>> decide_all(const Client& client,
                                         const std::vector<DecisionRequest>& requests,
                                         const BatchOptions& options = {});

}  // namespace clef
