// The implementation of batch_delivery.hpp: the batch's results to the sink, in order if asked,
// each repeated body answered once.
#include "engine/batch_delivery.hpp"

namespace clef::detail {

bool BatchDelivery::is_repeat(std::size_t index, const Sha256& key) {
  auto [it, inserted] = m_first_seen.try_emplace(key, FirstSeen{index, false});
  if (inserted) return false;
  ++m_summary.deduplicated;
  if (it->second.delivered)
    in_order(index, Held(it->second.index));
  else
    m_repeats_waiting[it->second.index].push_back(index);
  return true;
}

void BatchDelivery::finish(std::size_t index, const std::optional<Sha256>& key,
                           Result<Decision>&& result) {
  in_order(index, Held(std::move(result)));
  if (!key) return;
  m_first_seen[*key].delivered = true;
  if (auto waiting = m_repeats_waiting.find(index); waiting != m_repeats_waiting.end()) {
    const std::vector<std::size_t> repeats = std::move(waiting->second);
    m_repeats_waiting.erase(waiting);
    for (std::size_t repeat : repeats) in_order(repeat, Held(index));
  }
}

void BatchDelivery::after_delivery() {
  if (!m_handed_over) return;
  m_handed_over = false;
  if (m_options.after_delivery) m_options.after_delivery();
}

void BatchDelivery::hand_over(std::size_t index, Held&& held) {
  m_handed_over = true;
  if (auto* first = std::get_if<std::size_t>(&held))
    m_options.on_duplicate(index, *first);
  else
    m_sink(index, std::get<Result<Decision>>(std::move(held)));
}

void BatchDelivery::in_order(std::size_t index, Held&& held) {
  if (const auto* result = std::get_if<Result<Decision>>(&held))
    ++(result->ok() ? m_summary.succeeded : m_summary.failed);
  if (!m_options.ordered) return hand_over(index, std::move(held));
  m_held.emplace(index, std::move(held));
  while (!m_held.empty() && m_held.begin()->first == m_next_to_deliver) {
    hand_over(m_next_to_deliver, std::move(m_held.begin()->second));
    m_held.erase(m_held.begin());
    ++m_next_to_deliver;
  }
}

}  // namespace clef::detail
