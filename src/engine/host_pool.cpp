// The implementation of host_pool.hpp: choosing a host, and each host's health.
#include "engine/host_pool.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "clef/backend.hpp"
#include "util/ascii.hpp"
#include "util/sha256_bytes.hpp"

namespace clef::detail {
namespace {

/// Rendezvous (highest random weight) score of `key` on `host` (its URL, not its place in the
/// list): when a host leaves, or the list is given in another order, only the leaving host's
/// keys move; the others keep their host.
std::uint64_t rendezvous_score(std::string_view key, std::string_view host) {
  std::string text(key);
  text += '\n';
  text += host;
  const Sha256 digest = sha256(text);
  std::uint64_t score = 0;
  for (std::size_t i = 0; i < 8; ++i) score = (score << 8) | digest[i];
  return score;
}

}  // namespace

HostPool::HostPool(const std::vector<Client>& clients, std::size_t concurrency,
                   std::size_t per_host, double ejected_share) {
  const std::size_t cap = per_host ? std::min(per_host, concurrency) : concurrency;
  // As Envoy: the share rounded down, but one host may always be set aside.
  const double share = std::isfinite(ejected_share) ? std::clamp(ejected_share, 0.0, 1.0) : 1.0;
  m_max_ejected = std::max<std::size_t>(
      1, static_cast<std::size_t>(share * static_cast<double>(clients.size()) + 1e-9));
  m_hosts.reserve(clients.size());
  for (const Client& client : clients) {
    m_hosts.emplace_back(client, cap);
    m_hosts.back().summary.host = url_without_credentials(client.options().base_url);
  }
}

bool HostPool::may_take(const Host& host, Clock::time_point now, bool panic) const {
  if (now < host.paused_until) return false;
  // With every host set aside, none is: waiting for probes would hold the whole batch back,
  // and the items rather fail as they would against one server that is down.
  if (!panic) {
    if (ejected(host, now)) return false;
    // Back from an ejection but not yet answered, or past the cap: one request at a time.
    if (host.failures_in_a_row >= kEjectAfter || host.over_cap) return host.in_flight == 0;
  }
  if (host.in_flight >= host.limit.allowed()) return false;
  return !host.rate.per_second() || now >= host.next_slot;
}

std::optional<std::size_t> HostPool::choose(Clock::time_point now, std::optional<std::size_t> avoid,
                                            std::optional<std::string_view> affinity) {
  const bool panic = all_ejected(now);
  if (affinity) {
    std::optional<std::size_t> own;
    std::uint64_t best = 0;
    for (std::size_t i = 0; i < m_hosts.size(); ++i) {
      if (!panic && ejected(m_hosts[i], now)) continue;
      const std::uint64_t score = rendezvous_score(*affinity, m_hosts[i].summary.host);
      if (!own || score > best) own = i, best = score;
    }
    if (own && *own != avoid && !last_resort(m_hosts[*own], now) &&
        may_take(m_hosts[*own], now, panic))
      return own;
  }
  std::optional<std::size_t> chosen = least_busy(now, avoid, panic, false);
  if (!chosen) chosen = least_busy(now, avoid, panic, true);
  if (chosen) m_turn = *chosen + 1;
  return chosen;
}

std::optional<std::size_t> HostPool::least_busy(Clock::time_point now,
                                                std::optional<std::size_t> avoid, bool panic,
                                                bool last_resorts) {
  // The fewest outstanding; the host to avoid only when no other may take it.
  const auto better = [&](std::size_t i, std::size_t j) {
    if ((i == avoid) != (j == avoid)) return j == avoid;
    return m_hosts[i].in_flight < m_hosts[j].in_flight;
  };
  std::optional<std::size_t> chosen;
  for (std::size_t step = 0; step < m_hosts.size(); ++step) {
    const std::size_t i = (m_turn + step) % m_hosts.size();
    if (!last_resorts && last_resort(m_hosts[i], now)) continue;
    if (may_take(m_hosts[i], now, panic) && (!chosen || better(i, *chosen))) chosen = i;
  }
  return chosen;
}

HostPool::Clock::time_point HostPool::next_opening(Clock::time_point now) const {
  Clock::time_point soonest = Clock::time_point::max();
  const bool panic = all_ejected(now);
  for (const Host& host : m_hosts) {
    Clock::time_point opens = now;
    if (!panic && ejected(host, now)) opens = host.ejected_until;
    opens = std::max(opens, host.paused_until);
    if (host.rate.per_second()) opens = std::max(opens, host.next_slot);
    // Opening only when an answer frees a place: an answer wakes the batch anyway.
    if (opens <= now) continue;
    soonest = std::min(soonest, opens);
  }
  return soonest;
}

void HostPool::sent(std::size_t index, Clock::time_point now) {
  Host& host = m_hosts[index];
  ++host.in_flight;
  if (host.over_cap) host.probe_after = now + std::chrono::seconds(1);
  if (const std::optional<double> pace = host.rate.per_second()) {
    const auto interval =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / *pace));
    host.next_slot = std::max(host.next_slot, now) + interval;
  }
}

void HostPool::answered(std::size_t index, Clock::time_point now) {
  Host& host = m_hosts[index];
  host.failures_in_a_row = 0;
  host.ejections_in_a_row = 0;
  host.over_cap = false;
  host.limit.answered();
  host.rate.answered(now);
  ++host.summary.answered;
}

void HostPool::failed(std::size_t index, Clock::time_point now) {
  Host& host = m_hosts[index];
  if (++host.failures_in_a_row < kEjectAfter || ejected(host, now)) return;
  const auto set_aside = static_cast<std::size_t>(std::count_if(
      m_hosts.begin(), m_hosts.end(), [&](const Host& other) { return ejected(other, now); }));
  if (set_aside >= m_max_ejected) {
    // Kept in rotation as a last resort; its next failure asks again.
    host.failures_in_a_row = kEjectAfter - 1;
    if (!host.over_cap) host.probe_after = now + std::chrono::seconds(1);
    host.over_cap = true;
    return;
  }
  host.over_cap = false;
  const auto wait = std::min<Clock::duration>(
      std::chrono::seconds(1) * (1 << std::min(host.ejections_in_a_row, 4)), kMaxEjection);
  ++host.ejections_in_a_row;
  host.ejected_until = now + wait;
  ++host.summary.ejections;
  m_most_ejected = std::max(m_most_ejected, set_aside + 1);
}

bool HostPool::all_ejected(Clock::time_point now) const {
  return std::all_of(m_hosts.begin(), m_hosts.end(),
                     [&](const Host& host) { return ejected(host, now); });
}

std::vector<HostSummary> HostPool::summaries() const {
  std::vector<HostSummary> all;
  for (const Host& host : m_hosts) all.push_back(host.summary);
  return all;
}

bool HostPool::Host::overloaded_by(const Error& refusal) const {
  if (refusal.retry_after && refusal.retry_after->count() > 0) return true;
  const std::string said = ascii_lower(refusal.server_message);
  if (refusal.http_status == 503 && (said.find("server busy") != std::string::npos ||
                                     said.find("maximum pending requests") != std::string::npos))
    return true;
  return recent.count() >= 6;
}

std::optional<HostPool::Clock::time_point> HostPool::all_paused_until(Clock::time_point now) const {
  Clock::time_point until = Clock::time_point::max();
  for (const Host& host : m_hosts) {
    const Clock::time_point opens = std::max(host.paused_until, host.ejected_until);
    if (opens <= now) return std::nullopt;
    until = std::min(until, opens);
  }
  return until;
}

}  // namespace clef::detail
