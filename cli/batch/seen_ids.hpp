// The ids a `clef batch` run has read, as 64-bit hashes, for its warning on repeated ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace clef::cli {

/// A set of ids kept as 64-bit hashes in one open-addressed table. A node-based set took an
/// allocation and a cache miss per id, the largest cost clef's own code had in reading an item
/// (perf, a 40,000-item run); here an id is one probe of a flat array. A collision of two
/// 64-bit hashes (odds ~1e-8 at a million ids) could only add a false count to the warning.
/// The table's slots are chosen by the hash mixed with a seed drawn per run, so ids written to
/// collide (an input is hostile) cannot line up in one run of slots.
class SeenIds {
 public:
  SeenIds();

  /// Adds the id; false when an id with its hash was added before.
  bool insert(std::string_view id);

 private:
  bool insert_hash(std::uint64_t hash);
  std::size_t slot_of(std::uint64_t hash) const;
  void grow();

  std::vector<std::uint64_t> m_slots;  ///< 0: an empty slot (a hash of 0 is kept as 1).
  std::size_t m_count = 0;
  std::uint64_t m_seed = 0;
};

}  // namespace clef::cli
