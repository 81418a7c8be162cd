// The implementation of seen_ids.hpp.
#include "batch/seen_ids.hpp"

#include <functional>
#include <random>

namespace clef::cli {
namespace {

/// splitmix64's finaliser: every bit of the input moves every bit of the output.
std::uint64_t mixed(std::uint64_t value) {
  value ^= value >> 30;
  value *= 0xbf58476d1ce4e5b9ULL;
  value ^= value >> 27;
  value *= 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

}  // namespace

SeenIds::SeenIds() : m_slots(64, 0) {
  std::random_device device;
  m_seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

bool SeenIds::insert(std::string_view id) {
  return insert_hash(std::hash<std::string_view>{}(id));
}

bool SeenIds::insert_hash(std::uint64_t hash) {
  if (hash == 0) hash = 1;
  if ((m_count + 1) * 2 > m_slots.size()) grow();  // at most half full: probes stay short
  const std::size_t mask = m_slots.size() - 1;
  for (std::size_t slot = slot_of(hash);; slot = (slot + 1) & mask) {
    if (m_slots[slot] == hash) return false;
    if (m_slots[slot] == 0) {
      m_slots[slot] = hash;
      ++m_count;
      return true;
    }
  }
}

std::size_t SeenIds::slot_of(std::uint64_t hash) const {
  return static_cast<std::size_t>(mixed(hash ^ m_seed)) & (m_slots.size() - 1);
}

void SeenIds::grow() {
  std::vector<std::uint64_t> old(m_slots.size() * 2, 0);
  old.swap(m_slots);
  const std::size_t mask = m_slots.size() - 1;
  for (const std::uint64_t hash : old) {
    if (hash == 0) continue;
    std::size_t slot = slot_of(hash);
    while (m_slots[slot] != 0) slot = (slot + 1) & mask;
    m_slots[slot] = hash;
  }
}

}  // namespace clef::cli
