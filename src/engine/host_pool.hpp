// Internal: the servers one batch sends to — which of them takes the next item (the healthy one
// with the fewest requests outstanding, or the state's own host by rendezvous hashing), and
// each one's health: refusals teach its own limits, failures eject it for a while, and after the
// wait one request probes it (half-open) before it takes a full share again.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "clef/batch.hpp"
#include "engine/adaptive_limit.hpp"
#include "engine/adaptive_rate.hpp"

namespace clef::detail {

class HostPool {
 public:
  using Clock = std::chrono::steady_clock;

  /// Which of a host's last 32 outcomes were refusals (429/503), newest in the low bit: whether
  /// its refusals cluster, which a lone 503 among answers does not.
  class RecentRefusals {
   public:
    void record(bool refused) noexcept { m_bits = (m_bits << 1) | (refused ? 1u : 0u); }
    int count() const noexcept { return __builtin_popcount(m_bits); }

   private:
    std::uint32_t m_bits = 0;
  };

  /// One host of the pool: its client, what it may take, and how it has done.
  struct Host {
    Host(Client c, std::size_t cap) : client(std::move(c)), limit(cap) {}
    Client client;
    AdaptiveLimit limit;  ///< In flight, cut by its 503s.
    AdaptiveRate rate;    ///< The pace its 429s taught.
    std::size_t in_flight = 0;
    Clock::time_point next_slot{};     ///< Paced: the next start.
    Clock::time_point paused_until{};  ///< A Retry-After it asked for.
    int failures_in_a_row = 0;         ///< Connection failures, timeouts, 5xx since an answer.
    int ejections_in_a_row = 0;        ///< Since an answer: each doubles the wait.
    Clock::time_point ejected_until{};
    /// Failing, but past the cap on hosts set aside: kept in rotation as a last resort (it takes
    /// an item only when no other host can) and probed with one request a second, so a dead
    /// host that refuses at once cannot draw the items the healthy hosts are waiting for.
    bool over_cap = false;
    Clock::time_point probe_after{};
    RecentRefusals recent;
    HostSummary summary;

    /// Whether a refusal (429 or 503) says this host is overloaded or rate-limited, which costs it
    /// throughput (a cut, a pace, a pause), rather than one request's bad luck, which costs that
    /// item a retry: the server asked for a wait (Retry-After > 0; a token bucket's 429 and
    /// ollaya's QUEUE_FULL come with 1), said its queue is full (Ollama's 503 "server busy, please
    /// try again.  maximum pending requests exceeded"), or its refusals cluster (6 of its last 32
    /// outcomes: a server refusing 1 in 50 at random has such a window about once in 60,000
    /// requests, one refusing a fifth of them within a few rounds). A word like "overloaded" in a
    /// lone refusal with Retry-After: 0 is not taken at its word: the outcomes around it say more.
    bool overloaded_by(const Error& refusal) const;
  };

  /// `per_host`: the most in flight on one host (0: no cap but the batch's); `ejected_share`:
  /// the most of them set aside at once (BatchOptions::max_ejected_share; at least one).
  HostPool(const std::vector<Client>& clients, std::size_t concurrency, std::size_t per_host,
           double ejected_share = 1.0);

  std::size_t size() const noexcept { return m_hosts.size(); }
  Host& operator[](std::size_t index) noexcept { return m_hosts[index]; }
  const Host& operator[](std::size_t index) const noexcept { return m_hosts[index]; }

  /// The host to send an item to now, or nullopt when none may take one. Never `avoid` (the
  /// host that just refused or failed the item) while another may take it. With an
  /// `affinity` key, the key's own host (rendezvous hash over the hosts not ejected) when it
  /// has room, else the one with the fewest outstanding.
  std::optional<std::size_t> choose(Clock::time_point now, std::optional<std::size_t> avoid,
                                    std::optional<std::string_view> affinity);
  /// When a host that cannot take an item now might (a pause, a pace or an ejection ends), or
  /// Clock::time_point::max() when only an answer can free one.
  Clock::time_point next_opening(Clock::time_point now) const;

  /// Records that `index` was sent a request at `now` (its pace, its count).
  void sent(std::size_t index, Clock::time_point now);
  /// An answer came back from `index`: healthy again.
  void answered(std::size_t index, Clock::time_point now);
  /// `index` failed a request in a way that says it may be down or broken (connection, timeout,
  /// 5xx, a 200 that is not an answer, the model missing): kEjectAfter in a row, or a failed
  /// probe, eject it — for 1 s, doubling up to kMaxEjection — unless as many as the cap are set
  /// aside already: then it stays in rotation as a last resort (Host::over_cap), and its next
  /// failure tries again. While every host is ejected, none is: items go out and fail as
  /// against one server that is down, instead of waiting.
  void failed(std::size_t index, Clock::time_point now);
  /// When every host is paused or ejected at `now`: when the first of them opens again; else
  /// nullopt.
  std::optional<Clock::time_point> all_paused_until(Clock::time_point now) const;

  /// True while no host but ejected ones is left.
  bool all_ejected(Clock::time_point now) const;
  /// The summary of each host, in the order given.
  std::vector<HostSummary> summaries() const;
  /// The most hosts set aside at the same moment so far.
  std::size_t most_ejected_at_once() const noexcept { return m_most_ejected; }

 private:
  bool ejected(const Host& host, Clock::time_point now) const { return host.ejected_until > now; }
  /// `panic`: every host is set aside, so none is (see may_take's definition).
  bool may_take(const Host& host, Clock::time_point now, bool panic) const;
  /// A host past the cap that is not due its probe: chosen only when no other may take.
  bool last_resort(const Host& host, Clock::time_point now) const {
    return host.over_cap && now < host.probe_after;
  }
  /// The host with the fewest outstanding among those that may take, `avoid` last; with
  /// `last_resorts`, also the hosts past the cap.
  std::optional<std::size_t> least_busy(Clock::time_point now, std::optional<std::size_t> avoid,
                                        bool panic, bool last_resorts);

  static constexpr int kEjectAfter = 3;
  static constexpr std::chrono::seconds kMaxEjection{16};

  std::vector<Host> m_hosts;
  std::size_t m_turn = 0;          ///< Ties go round the pool.
  std::size_t m_max_ejected = 1;   ///< The cap on hosts set aside at once.
  std::size_t m_most_ejected = 0;  ///< The most set aside at once so far.
};

}  // namespace clef::detail
