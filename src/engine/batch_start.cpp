// The implementation of batch_run.hpp's starting: which item may start now and on which host,
// within -j, each host's limit and pace, --rate (or a shared rate), pauses and the cost cap.
// Runs under the run's lock, on whichever thread the run's state changed on.
#include <algorithm>

#include "engine/batch_run.hpp"

namespace clef::detail {

/// Starts items while the limits allow (into `sends`, submitted once the lock is let go);
/// returns when to look again if only time stands in the way (a pause, the rate cap), else
/// Clock::time_point::max().
BatchRun::Clock::time_point BatchRun::start_what_may_start(
    std::vector<std::unique_ptr<Flight>>& sends) {
  while (m_in_flight < m_limit && !m_stopping) {
    if (m_options.max_cost_usd && !may_spend_more()) break;
    const Clock::time_point now = Clock::now();
    std::unique_ptr<Flight> flight = next_to_send(now);
    if (!flight) break;
    // --rate: an item waits for its slot (the last item waits for none after it).
    if (m_options.max_requests_per_second > 0 && now < m_next_slot) {
      m_waiting.hold_back(std::move(flight));
      return m_next_slot;
    }
    const std::optional<std::size_t> host = m_hosts.choose(now, flight->avoid, affinity(*flight));
    if (!host) {
      // No host may take it now: it goes first once one may. The resends waiting need a
      // host too, so only a host opening (or an answer) is worth waking for: a resend already
      // due would be a deadline in the past, and the wait a spin.
      m_waiting.hold_back(std::move(flight));
      return m_hosts.next_opening(now);
    }
    // A shared budget (--rate-store): asked last, so that no start is taken for an item that
    // then has no host; an item refused its start goes first once it may ask again.
    if (m_options.shared_rate) {
      const std::chrono::nanoseconds wait =
          std::min(m_options.shared_rate->take(), std::chrono::nanoseconds(std::chrono::hours(24)));
      if (wait.count() > 0) {
        m_waiting.hold_back(std::move(flight));
        return now + std::chrono::duration_cast<Clock::duration>(wait);
      }
    }
    if (m_options.max_requests_per_second > 0)
      m_next_slot = std::max(m_next_slot, now) + rate_interval();
    flight->last_sent = now;
    flight->host = *host;
    m_hosts.sent(*host, now);
    ++m_in_flight;
    sends.push_back(std::move(flight));
  }
  return m_stopping || m_in_flight >= m_limit ? Clock::time_point::max() : m_waiting.next_due();
}

/// A resend that is due first, else the next prepared item (its throttle budget starts now).
std::unique_ptr<Flight> BatchRun::next_to_send(Clock::time_point now) {
  if (std::unique_ptr<Flight> again = m_waiting.take(now)) return again;
  if (m_prepared.empty()) return nullptr;
  std::unique_ptr<Flight> flight = std::move(m_prepared.front());
  m_prepared.pop_front();
  flight->first_sent = now;
  return flight;
}

/// BatchOptions::max_cost_usd: whether one more request fits under the cap with every request
/// in flight at the dearest cost seen; none in flight and none fits is the cap reached.
bool BatchRun::may_spend_more() {
  const double cap = *m_options.max_cost_usd;
  // Sums of dollars carry binary noise (0.1 + 0.1 + 0.1 > 0.3): a billionth of the cap is slack.
  const double slack = cap * 1e-9 + 1e-12;
  if (m_spent + slack < cap) {
    if (!m_dearest) return m_in_flight == 0;                // one at a time until a cost is known
    if (m_in_flight + 1 > 2 * m_costs_known) return false;  // slow start: wait for evidence
    const double committed = static_cast<double>(m_in_flight + 1) * *m_dearest;
    if (m_spent + committed <= cap + slack) return true;
    if (m_in_flight > 0) return false;  // those in flight may cost less: wait for them
  }
  m_tally.cost_cap_reached = true;
  stop(false);
  return false;
}

/// A result's cost toward BatchOptions::max_cost_usd (and the summary's spend).
void BatchRun::count_cost(const Result<Decision>& result) {
  if (!result) return;  // a failed request is taken to cost nothing
  const Cost& cost = result->cost;
  if (cost.usd) {
    m_spent += *cost.usd;
    if (cost.source == CostSource::cached) return;  // $0 from the cache says nothing of a price
    m_dearest = std::max(m_dearest.value_or(0.0), *cost.usd);
    ++m_costs_known;
  } else if (m_options.max_cost_usd && !m_tally.cost_unknown) {
    m_tally.cost_unknown = true;  // the cap cannot hold: stop (check_stop)
  }
}

/// 1 / --rate, never more than a day (a rate of 1e-10 would overflow the clock's count).
BatchRun::Clock::duration BatchRun::rate_interval() const {
  const double seconds = std::min(1.0 / m_options.max_requests_per_second, 86400.0);
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

/// With state affinity over several hosts: the key that picks the item's own host.
std::optional<std::string_view> BatchRun::affinity(const Flight& flight) const {
  if (!m_several || !m_options.state_affinity) return std::nullopt;
  return flight.request->state.wire_json();
}

}  // namespace clef::detail
