// clef batch's --shard: which part of the input this run decides, from the flag or from the
// array job it runs in (Kubernetes Indexed Jobs, Slurm job arrays).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "clef/result.hpp"

namespace clef::cli {

/// Shard `index` of `count` (0 ≤ index < count).
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
  std::string text() const;  ///< "K/N", as the flag and the run record write it.
};

/// The most shards a run may be split into.
inline constexpr std::size_t max_shards = 100000;

/// "K/N" read strictly (digits only, K < N ≤ max_shards); `where` names the flag or file.
Result<Shard> parse_shard(const std::string& text, const std::string& where);

/// The shard this run decides: `--shard K/N`; or `--shard auto`, from the environment: the
/// index from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) with N from `--shards N`, else a
/// Slurm array's task (shard_from_slurm in the .cpp: the whole array's (ID − MIN) / STEP of
/// COUNT; with --shards N an array of fewer tasks, a rerun, takes each ID as its shard). None
/// without --shard: a batch is never split unless asked, even inside an array job.
Result<std::optional<Shard>> resolve_shard(const std::string& flag, std::size_t shards_flag);

/// Whether the item with `id` is this shard's: clef::shard_of its id key; an item without an id
/// (an unreadable line) is shard 0's, so its error is written exactly once.
bool in_shard(const Shard& shard, const nlohmann::ordered_json& id);

}  // namespace clef::cli
