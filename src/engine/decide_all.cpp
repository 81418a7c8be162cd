// The implementation of clef/batch.hpp's plain calls over run_batch: decide_all (a vector in,
// results in the same order out) and shard_of (which of N shards an item's id belongs to).
#include <cstdint>
#include <optional>
#include <vector>

#include "clef/batch.hpp"
#include "util/sha256_bytes.hpp"

namespace clef {

std::vector<Result<Decision>> decide_all(const Client& client,
                                         const std::vector<DecisionRequest>& requests,
                                         BatchOptions options) {
  std::size_t next = 0;
  RequestSource source = [&]() -> std::optional<Result<DecisionRequest>> {
    if (next == requests.size()) return std::nullopt;
    return Result<DecisionRequest>(requests[next++]);
  };
  std::vector<std::optional<Result<Decision>>> slots(requests.size());
  ResultSink sink = [&](std::size_t index, Result<Decision>&& result) {
    slots[index].emplace(std::move(result));
  };
  options.on_duplicate = [&](std::size_t index, std::size_t first) { slots[index] = slots[first]; };
  options.source_never_waits = true;  // a vector in memory
  run_batch(client, source, sink, options);
  std::vector<Result<Decision>> results;
  results.reserve(requests.size());
  for (auto& slot : slots) {
    results.push_back(slot ? std::move(*slot)
                           : Result<Decision>(make_error(ErrorKind::cancelled,
                                                         "not sent: the batch was stopped")));
  }
  return results;
}

std::size_t shard_of(std::string_view id, std::size_t shards) {
  if (shards < 2) return 0;
  const detail::Sha256 digest = detail::sha256(id);
  std::uint64_t head = 0;
  for (std::size_t i = 0; i < 8; ++i) head = (head << 8) | digest[i];
  return static_cast<std::size_t>(head % shards);
}

}  // namespace clef
