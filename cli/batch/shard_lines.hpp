// clef merge's index of the shards' result lines: where each id's line is in which shard, not
// the line itself, so merging holds one small entry per id whatever the lines weigh, and copies
// each line from its shard when the merged output is written.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "batch/batch_shard.hpp"
#include "clef/result.hpp"
#include "common/output_target.hpp"

namespace clef::cli {

/// Where one result line is: its shard (the order merge was given them), its byte offset and
/// length (without the newline), and whether it holds a result --resume would keep.
struct LineAt {
  std::uint32_t shard = 0;
  std::uint32_t length = 0;
  std::uint64_t offset = 0;
  bool kept = false;
};

class ShardIndex {
 public:
  ShardIndex() = default;
  ShardIndex(const ShardIndex&) = delete;
  ShardIndex& operator=(const ShardIndex&) = delete;
  ~ShardIndex();

  /// Indexes the whole lines of `shard`'s output at `path` (a regular file: its lines are read
  /// again when written), as the `number`th shard given. A line that is not a JSON object (torn
  /// by a kill) is left out: its item counts as missing. Refused: an id of another shard; a
  /// read stopped by `stop` (ErrorKind::cancelled).
  Status add_shard(const std::string& path, std::uint32_t number, const Shard& shard,
                   const std::atomic<bool>* stop);

  /// The next line of the id with key `key`, taken out of the index; nullopt when none is left.
  std::optional<LineAt> take_id(const std::string& key);
  /// The line of the item without an id at input line `line`, taken out of the index.
  std::optional<LineAt> take_line(std::size_t line);
  /// An id still holding a line once the input has been read, or nullopt.
  std::optional<std::string> first_left() const;
  /// An id with more than one line in the shards (the input repeats it: its lines cannot be
  /// told apart, so they cannot be put back in the input's order), or nullopt.
  std::optional<std::string> repeated_id() const;
  /// The path of the shard that holds the lines of `key` (one shard holds every line of an id).
  const std::string& path_of(const std::string& key) const;
  /// Lines that were not whole result lines (torn by a kill, or not clef's): left out.
  std::size_t left_out() const noexcept { return m_left_out; }
  /// What the shards' lines say their decisions cost, in dollars ("cost"), and how many lines
  /// say the cost is unknown.
  double spent_usd() const noexcept { return m_spent_usd; }
  std::size_t cost_unknown() const noexcept { return m_cost_unknown; }

  /// The line at `at`, read from its shard.
  Result<std::string> read(const LineAt& at) const;

 private:
  std::unordered_map<std::string, std::vector<LineAt>> m_by_id;
  std::unordered_map<std::size_t, LineAt> m_by_line;
  std::vector<int> m_files;
  std::vector<std::string> m_paths;
  std::size_t m_left_out = 0;
  double m_spent_usd = 0;
  std::size_t m_cost_unknown = 0;
};

/// Copies `lines` from their shards to `out`, then flushes it.
Status copy_lines(const std::vector<LineAt>& lines, const ShardIndex& index, LineWriter& out);

}  // namespace clef::cli
