// Internal: the batch engine's last stage (batch.cpp) — results handed to the caller's sink,
// in input order with BatchOptions::ordered, and with --dedupe each repeated body answered once:
// a repeat of a body already delivered is delivered at once as "same as item N", a repeat of
// one still in flight when that one is.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <unordered_map>
#include <variant>
#include <vector>

#include "clef/batch.hpp"
#include "util/sha256_bytes.hpp"

namespace clef::detail {

class BatchDelivery {
 public:
  /// `summary`'s succeeded and failed counts are kept here; it outlives this.
  BatchDelivery(const ResultSink& sink, const BatchOptions& options, BatchSummary& summary)
      : m_sink(sink), m_options(options), m_summary(summary) {}

  /// With dedupe, before item `index` is sent: true when its body `key` was seen before (the
  /// item is then answered by its first, now or when that lands, and must not be sent).
  bool is_repeat(std::size_t index, const Sha256& key);

  /// Item `index` is done: its result goes out, and so do its repeats waiting for it.
  void finish(std::size_t index, const std::optional<Sha256>& key, Result<Decision>&& result);

  /// A result that never had a body to send (an unreadable item, a refused request).
  void deliver(std::size_t index, Result<Decision>&& result) {
    in_order(index, Held(std::move(result)));
  }

  /// The next index ordered delivery waits for: items past it are held back.
  std::size_t next_to_deliver() const { return m_next_to_deliver; }

  /// BatchOptions::after_delivery, when anything went to the sink or on_duplicate since it was
  /// last called.
  void after_delivery();

 private:
  /// A result held back for ordered delivery: a result, or "same as item N".
  using Held = std::variant<Result<Decision>, std::size_t>;
  /// What dedupe remembers of a unique body: its first item, and whether that was delivered.
  struct FirstSeen {
    std::size_t index = 0;
    bool delivered = false;
  };

  /// To the sink now, or once every earlier item went (ordered).
  void in_order(std::size_t index, Held&& held);
  void hand_over(std::size_t index, Held&& held);

  const ResultSink& m_sink;
  const BatchOptions& m_options;
  BatchSummary& m_summary;
  std::size_t m_next_to_deliver = 0;
  bool m_handed_over = false;  ///< Since after_delivery() was last called.
  std::map<std::size_t, Held> m_held;
  std::unordered_map<Sha256, FirstSeen, Sha256Hash> m_first_seen;
  /// Repeats of first items still in flight, by the first item's index.
  std::unordered_map<std::size_t, std::vector<std::size_t>> m_repeats_waiting;
};

}  // namespace clef::detail
