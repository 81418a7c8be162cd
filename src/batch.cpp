// The implementation of clef/batch.hpp: many decisions with bounded concurrency over reused
// connections.
#include "clef/batch.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <variant>

#include "ascii.hpp"
#include "host_pool.hpp"
#include "retry.hpp"
#include "sha256_bytes.hpp"

namespace clef {
namespace {

using Clock = std::chrono::steady_clock;

/// What dedupe remembers of a unique body: its first item, and whether that was delivered.
struct FirstSeen {
  std::size_t index = 0;
  bool delivered = false;
};

/// A result held back for ordered delivery: a result, or "same as item N".
using Held = std::variant<Result<Decision>, std::size_t>;

/// The batch on the clients' event loops: the calling thread pulls items, starts them with
/// Client::submit on a host of the pool and delivers what comes back; the transfers, their
/// retries and timeouts run on the loop. No thread per request in flight, and the sink runs on
/// the caller's thread.
class BatchRun {
 public:
  BatchRun(const std::vector<Client>& hosts, const RequestSource& source, const ResultSink& sink,
           const BatchOptions& options)
      : m_first(hosts.front()),
        m_source(source),
        m_sink(sink),
        m_options(options),
        m_dedupe(options.dedupe && options.on_duplicate),
        m_several(hosts.size() > 1),
        m_limit(std::max<std::size_t>(options.concurrency, 1)),
        m_window(m_limit * 8),
        m_retry(engine_retry(m_first.options().retry, m_several)),
        m_hosts(hosts, m_limit, options.per_host) {}

  BatchSummary run() {
    // BatchOptions::cancel wakes the caller's thread at once, however long it would wait.
    const std::uint64_t registration = m_options.cancel.on_cancel([this] {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_cancel_heard = true;
      m_arrived.notify_one();
    });
    try {
      BatchSummary summary = drive();
      m_options.cancel.forget(registration);
      return summary;
    } catch (...) {
      m_options.cancel.forget(registration);
      // The source, the sink or a callback of the options threw: transfers still in flight will
      // call back into this object, so it must outlive every one of them before the exception
      // goes on to the caller.
      std::unique_lock<std::mutex> lock(m_mutex);
      m_arrived.wait(lock, [&] { return m_called_back == m_submitted; });
      throw;
    }
  }

 private:
  BatchSummary drive() {
    std::vector<Landed> landed;
    for (;;) {
      for (Landed& item : landed) settle(std::move(item));
      landed.clear();
      check_stop();
      Clock::time_point wake = start_what_may_start();
      if (m_stopping) cancel_waiting();
      if (m_in_flight == 0 && m_waiting_to_resend.empty() && !m_held_back &&
          (m_exhausted || m_stopping))
        break;
      std::unique_lock<std::mutex> lock(m_mutex);
      const auto arrived = [&] { return !m_landed.empty() || m_cancel_heard; };
      if (wake == Clock::time_point::max()) {
        m_arrived.wait(lock, arrived);
      } else {
        // A pause may be long (Retry-After): look at should_stop meanwhile.
        wake = std::min(wake, Clock::now() + std::chrono::milliseconds(20));
        m_arrived.wait_until(lock, wake, arrived);
      }
      landed.swap(m_landed);
      m_cancel_heard = false;  // heard: check_stop() sees the token itself from now on
    }
    m_summary.hosts = m_hosts.summaries();
    return m_summary;
  }

  /// One item between its start and its delivery.
  struct Flight {
    std::size_t index = 0;
    DecisionRequest request;
    std::optional<detail::Sha256> key;  ///< With dedupe: its body's digest.
    Clock::time_point first_sent{};
    Clock::time_point last_sent{};     ///< Of its latest attempt, for the adaptive limit.
    Clock::time_point not_before{};    ///< A refused item waits out its own Retry-After.
    int throttled = 0;                 ///< 429/503 answers so far.
    std::size_t host = 0;              ///< Of the pool: where its latest attempt went.
    std::optional<std::size_t> avoid;  ///< The host that refused or failed it last.
    int attempts = 0;  ///< Several hosts: failed attempts that spend the retry budget.
    std::size_t refused_connections = 0;  ///< Several hosts: connections that failed.
  };
  /// A flight back from the loop with its result.
  struct Landed {
    std::unique_ptr<Flight> flight;
    Result<Decision> result;
  };

  /// Asks should_stop (and the quota) once more; true once the batch is stopping.
  bool check_stop() {
    if (!m_stopping &&
        (m_summary.quota_exhausted || m_summary.unreachable || m_options.cancel.cancelled() ||
         (m_options.should_stop && m_options.should_stop()))) {
      m_stopping = true;
      m_summary.stopped = !m_summary.quota_exhausted && !m_summary.unreachable;
    }
    return m_stopping;
  }

  /// Starts items while the limits allow; returns when to look again if only time stands in
  /// the way (a pause, the rate cap), else Clock::time_point::max().
  Clock::time_point start_what_may_start() {
    while (m_in_flight < m_limit && !check_stop()) {
      const Clock::time_point now = Clock::now();
      std::unique_ptr<Flight> flight = std::move(m_held_back);
      if (!flight && !m_waiting_to_resend.empty() &&
          m_waiting_to_resend.front()->not_before <= now) {
        flight = std::move(m_waiting_to_resend.front());
        m_waiting_to_resend.pop_front();
      }
      if (!flight) {
        if (m_exhausted || (m_options.ordered && m_summary.started >= m_next_to_deliver + m_window))
          break;
        flight = next_item();
        if (!flight) continue;
        flight->first_sent = now;
      }
      // --rate: an item waits for its slot (the last item waits for none after it).
      if (m_options.max_requests_per_second > 0 && now < m_next_slot) {
        m_held_back = std::move(flight);
        return m_next_slot;
      }
      const std::optional<std::size_t> host = m_hosts.choose(now, flight->avoid, affinity(*flight));
      if (!host) {
        // No host may take it now: it goes first once one may. The resends waiting need a
        // host too, so only a host opening (or an answer) is worth waking for: a resend already
        // due would be a deadline in the past, and the wait a spin.
        m_held_back = std::move(flight);
        return m_hosts.next_opening(now);
      }
      if (m_options.max_requests_per_second > 0)
        m_next_slot = std::max(m_next_slot, now) + rate_interval();
      send(std::move(flight), *host);
    }
    return m_stopping || m_in_flight >= m_limit ? Clock::time_point::max() : next_resend();
  }

  /// When the first refused item may be sent again, or Clock::time_point::max().
  Clock::time_point next_resend() const {
    return m_waiting_to_resend.empty() ? Clock::time_point::max()
                                       : m_waiting_to_resend.front()->not_before;
  }

  /// 1 / --rate, never more than a day (a rate of 1e-10 would overflow the clock's count).
  Clock::duration rate_interval() const {
    const double seconds = std::min(1.0 / m_options.max_requests_per_second, 86400.0);
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

  /// With state affinity over several hosts: the key that picks the item's own host.
  std::optional<std::string_view> affinity(const Flight& flight) const {
    if (!m_several || !m_options.state_affinity) return std::nullopt;
    return flight.request.state.wire_json();
  }

  /// The next item to send, or null when there is none to send now (the input ended, the
  /// item was bad, or a duplicate was answered without sending).
  std::unique_ptr<Flight> next_item() {
    std::optional<Result<DecisionRequest>> item = m_source();
    if (!item) {
      m_exhausted = true;
      return nullptr;
    }
    const std::size_t index = m_summary.started++;
    if (!*item) {
      deliver(index, item->error());
      return nullptr;
    }
    auto flight = std::make_unique<Flight>();
    flight->index = index;
    flight->request = std::move(item->value());
    if (m_dedupe) {
      auto body = m_first.request_body(flight->request);
      if (!body) {
        deliver(index, body.error());
        return nullptr;
      }
      flight->key = detail::sha256(body.value());
      auto [it, inserted] = m_first_seen.try_emplace(*flight->key, FirstSeen{index, false});
      if (!inserted) {
        ++m_summary.deduplicated;
        if (it->second.delivered)
          deliver(index, it->second.index);
        else
          m_duplicates_waiting[it->second.index].push_back(index);
        return nullptr;
      }
    }
    return flight;
  }

  void send(std::unique_ptr<Flight> flight, std::size_t host) {
    const Clock::time_point now = Clock::now();
    flight->last_sent = now;
    flight->host = host;
    m_hosts.sent(host, now);
    ++m_in_flight;
    ++m_submitted;
    Flight* raw = flight.release();
    // The request is copied, not moved: a 429 sends it again.
    m_hosts[host].client.submit(
        raw->request, m_retry,
        [this, raw](Result<Decision> result) {
          std::lock_guard<std::mutex> lock(m_mutex);
          m_landed.push_back(Landed{std::unique_ptr<Flight>(raw), std::move(result)});
          ++m_called_back;
          // Notified under the lock: run() cannot return (and destroy this) before it is
          // released.
          m_arrived.notify_one();
        },
        m_options.cancel);
  }

  /// A result back from the loop: delivered, or queued to be sent again — a 429/503 within the
  /// throttle budget, and with several hosts a failure that another host may not have.
  void settle(Landed&& landed) {
    --m_in_flight;
    Flight& flight = *landed.flight;
    detail::HostPool::Host& host = m_hosts[flight.host];
    --host.in_flight;
    Result<Decision>& result = landed.result;
    const Clock::time_point now = Clock::now();
    const bool within_budget = !m_stopping && now - flight.first_sent < m_options.throttle_budget;
    const bool refused = !result && detail::is_throttling(result.error());
    host.recent.record(refused);
    if (refused && within_budget) {
      throttled(landed);
      return;
    }
    // Refused as the batch stops: it would have been sent again, so it is not done rather than
    // failed (--resume sends it; a summary does not count the server's 503 against it).
    if (refused && m_stopping && m_options.throttle_budget.count() > 0) {
      ++m_summary.throttled;
      ++host.summary.refused;
      finish(flight, make_error(ErrorKind::cancelled,
                                "the batch stopped before this item was sent again (" +
                                    result.error().message + ")"));
      return;
    }
    // Several hosts: a 200 whose answers are not valid (probabilities summing to 1.8, another
    // model's) is this host's fault as much as a 5xx is.
    const bool unusable = result && m_several && !usable(result.value());
    if (unusable || (!result && m_several && another_host_may_answer(result.error()))) {
      m_hosts.failed(flight.host, now);
      if (!result) note_reachability(result);
      const ErrorKind kind = result ? ErrorKind::invalid_response : result.error().kind;
      if (within_budget && moves_free_or_within_retries(flight, kind)) {
        ++host.summary.moved;
        flight.avoid = flight.host;
        flight.not_before = now;
        queue_resend(std::move(landed.flight));
        return;
      }
    }
    // Refused again and again until the budget ran out (not a replayed refusal's last word).
    if (refused && !m_stopping && flight.throttled > 0)
      result = out_of_throttle_budget(result.error());
    if (!result && result.error().kind == ErrorKind::quota_exhausted)
      m_summary.quota_exhausted = true;
    if (result) {
      if (unusable)
        ++host.summary.answered;  // an answer, but not one that clears the host's failures
      else
        m_hosts.answered(flight.host, now);
      if (m_several) result->host = host.summary.host;
    } else {
      ++host.summary.failed;
      if (m_several) {
        Error error = result.error();
        error.host = host.summary.host;
        result = Result<Decision>(std::move(error));
      }
    }
    if (!m_several || result) note_reachability(result);
    finish(flight, std::move(result));
  }

  /// Several hosts: what another host may answer — what a retry may fix, and what only this
  /// host got wrong (a 200 that is no answer, the model missing there).
  static bool another_host_may_answer(const Error& error) {
    return error.retryable() || error.kind == ErrorKind::invalid_response ||
           error.kind == ErrorKind::not_found;
  }

  /// Several hosts: a connection that failed costs the item nothing once per host (another host
  /// will take it); past that, and for any other failure, each try spends one attempt, so an
  /// item fails in the end when every host is down, as it would against one.
  bool moves_free_or_within_retries(Flight& flight, ErrorKind kind) const {
    if (kind == ErrorKind::connection_failed && ++flight.refused_connections <= m_hosts.size())
      return true;
    return ++flight.attempts < m_first.options().retry.max_attempts;
  }

  /// Every answer valid: none invalid, of the wrong type or missing. (A refusal is the model's
  /// own answer, and abstaining is a policy's.)
  static bool usable(const Decision& decision) {
    return std::none_of(decision.answers.begin(), decision.answers.end(), [](const Answer& a) {
      return a.status == AnswerStatus::invalid || a.status == AnswerStatus::wrong_type ||
             a.status == AnswerStatus::missing;
    });
  }

  /// A refusal (429 or 503) that outlasted --throttle-budget: rate_limited, whatever the status
  /// (--resume redoes it), saying how long it was refused.
  Error out_of_throttle_budget(Error error) const {
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(m_options.throttle_budget).count();
    error.kind = ErrorKind::rate_limited;
    error.message = "still refused after the throttle budget of " + std::to_string(seconds) +
                    " s: " + error.message;
    return error;
  }

  /// Whether a refusal (429 or 503) says the host is overloaded or rate-limited, which costs it
  /// throughput (a cut, a pace, a pause), rather than one request's bad luck, which costs that
  /// item a retry: the server asked for a wait (Retry-After > 0; a token bucket's 429 and
  /// ollaya's QUEUE_FULL come with 1), said its queue is full (Ollama's 503 "server busy, please
  /// try again.  maximum pending requests exceeded"), or its refusals cluster (6 of its last 32
  /// outcomes: a server refusing 1 in 50 at random has such a window about once in 60,000
  /// requests, one refusing a fifth of them within a few rounds). A word like "overloaded" in a
  /// lone refusal with Retry-After: 0 is not taken at its word: the outcomes around it say more.
  static bool overloaded(const Error& error, const detail::HostPool::Host& host) {
    if (error.retry_after && error.retry_after->count() > 0) return true;
    const std::string said = detail::ascii_lower(error.server_message);
    if (error.http_status == 503 && (said.find("server busy") != std::string::npos ||
                                     said.find("maximum pending requests") != std::string::npos))
      return true;
    return host.recent.count() >= 6;
  }

  /// The server refused. A 429 (too many a second) teaches the host's pace
  /// (adaptive_rate.hpp); once it is paced, a 429 lowers the pace and the item alone waits out
  /// its Retry-After (or goes to another host) while the others go on at that pace. A 503 (too
  /// many at once), or a 429 before enough answers have come back to know a rate, keeps fewer
  /// in flight on that host from now on. Before the host is paced, a Retry-After (or a refusal
  /// of its only request in flight) also pauses the host — for as long as it asked, never past
  /// the policy's cap, else a growing backoff.
  void throttled(Landed& landed) {
    Flight& flight = *landed.flight;
    detail::HostPool::Host& host = m_hosts[flight.host];
    const Error& error = landed.result.error();
    const Clock::time_point now = Clock::now();
    ++m_summary.throttled;
    ++host.summary.refused;
    const RetryPolicy& policy = m_first.options().retry;
    std::optional<std::chrono::milliseconds> asked = error.retry_after;
    // "Retry-After: 0" from a server that refuses everything would be a tight loop: back off.
    if (asked && asked->count() == 0) asked.reset();
    if (asked) asked = std::min(*asked, policy.max_retry_after);
    // The backoff too is a pause, held to --max-retry-after as the server's own asking is.
    const auto delay = std::min(detail::backoff_delay(policy, ++flight.throttled, asked, m_random),
                                policy.max_retry_after);
    // A wait that would outlast the item's throttle budget is not waited: the item ends now.
    if (now + delay >= flight.first_sent + m_options.throttle_budget) {
      finish(flight, out_of_throttle_budget(error));
      return;
    }
    if (m_several) flight.avoid = flight.host;
    if (!overloaded(error, host)) {
      // A lone 429 or 503 among answers: this item alone tries again — when the server said
      // (Retry-After: 0 is at once: should it refuse everything so, its refusals cluster and
      // the backoff below takes over), else after its own backoff; elsewhere at once with
      // several hosts. The host keeps its pace and what it may have in flight.
      const auto wait = error.retry_after ? std::chrono::milliseconds(0) : delay;
      flight.not_before = m_several ? now : now + wait;
      queue_resend(std::move(landed.flight));
      return;
    }
    const bool was_paced = host.rate.per_second().has_value();
    if (was_paced && error.http_status == 429 && host.rate.refused(flight.last_sent, now)) {
      flight.not_before = m_several ? now : now + delay;
      queue_resend(std::move(landed.flight));
      return;
    }
    const bool at_one = host.limit.allowed() == 1;
    if (error.http_status != 429 || !host.rate.refused(flight.last_sent, now))
      host.limit.refused(flight.last_sent, now, host.in_flight);
    if ((error.retry_after || at_one) && now + delay > host.paused_until) {
      host.paused_until = now + delay;
      announce_pause(now, error);
    }
    queue_resend(std::move(landed.flight));
  }

  /// on_pause, when no host may be sent to before a pause ends: until the first one ends.
  void announce_pause(Clock::time_point now, const Error& error) {
    Clock::time_point until = Clock::time_point::max();
    for (std::size_t i = 0; i < m_hosts.size(); ++i) {
      const auto& host = m_hosts[i];
      const Clock::time_point opens = std::max(host.paused_until, host.ejected_until);
      if (opens <= now) return;
      until = std::min(until, opens);
    }
    if (until <= m_announced_until) return;
    m_announced_until = until;
    if (m_options.on_pause)
      m_options.on_pause(std::chrono::system_clock::now() + (until - now), error);
  }

  /// Resends wait in the order they become due.
  void queue_resend(std::unique_ptr<Flight> flight) {
    const auto later =
        std::upper_bound(m_waiting_to_resend.begin(), m_waiting_to_resend.end(), flight->not_before,
                         [](Clock::time_point due, const std::unique_ptr<Flight>& other) {
                           return due < other->not_before;
                         });
    m_waiting_to_resend.insert(later, std::move(flight));
  }

  /// BatchOptions::stop_when_unreachable: counts connection failures in a row until a success.
  void note_reachability(const Result<Decision>& result) {
    if (!m_options.stop_when_unreachable || m_reached) return;
    if (result) {
      m_reached = true;
      return;
    }
    const ErrorKind kind = result.error().kind;
    if ((kind == ErrorKind::connection_failed || kind == ErrorKind::tls) &&
        ++m_unreachable_in_a_row >= 2 * m_limit) {
      m_summary.unreachable = result.error();
    }
  }

  /// Items waiting out a pause when the batch stops end as the old workers' did.
  void cancel_waiting() {
    if (m_held_back) m_waiting_to_resend.push_front(std::move(m_held_back));
    while (!m_waiting_to_resend.empty()) {
      std::unique_ptr<Flight> flight = std::move(m_waiting_to_resend.front());
      m_waiting_to_resend.pop_front();
      finish(*flight, make_error(ErrorKind::cancelled, "the batch was stopped"));
    }
  }

  void finish(const Flight& flight, Result<Decision>&& result) {
    deliver(flight.index, std::move(result));
    if (!flight.key) return;
    m_first_seen[*flight.key].delivered = true;
    if (auto waiting = m_duplicates_waiting.find(flight.index);
        waiting != m_duplicates_waiting.end()) {
      const std::vector<std::size_t> duplicates = std::move(waiting->second);
      m_duplicates_waiting.erase(waiting);
      for (std::size_t duplicate : duplicates) deliver(duplicate, flight.index);
    }
  }

  void hand_over(std::size_t index, Held&& held) {
    if (auto* first = std::get_if<std::size_t>(&held))
      m_options.on_duplicate(index, *first);
    else
      m_sink(index, std::get<Result<Decision>>(std::move(held)));
  }

  void deliver(std::size_t index, Held&& held) {
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

  /// The client's policy, but 429s and 503s come back here at once: settle() paces or pauses.
  /// With several hosts every failure comes back at once: settle() sends it to another host.
  static RetryPolicy engine_retry(RetryPolicy policy, bool several_hosts) {
    policy.retry_throttling = false;
    if (several_hosts) policy.max_attempts = 1;
    return policy;
  }

  const Client m_first;  ///< Of the hosts: its policy and request bodies stand for all.
  const RequestSource& m_source;
  const ResultSink& m_sink;
  const BatchOptions& m_options;
  const bool m_dedupe;
  const bool m_several;       ///< More than one host.
  const std::size_t m_limit;  ///< -j: the most in flight, ever.
  const std::size_t m_window;
  const RetryPolicy m_retry;

  // Touched by the caller's thread only.
  detail::HostPool m_hosts;
  BatchSummary m_summary;
  std::size_t m_in_flight = 0;
  bool m_exhausted = false;
  bool m_stopping = false;
  bool m_reached = false;                  ///< stop_when_unreachable: a result has come back whole.
  std::size_t m_unreachable_in_a_row = 0;  ///< stop_when_unreachable: failures to connect.
  std::size_t m_next_to_deliver = 0;
  std::map<std::size_t, Held> m_held;
  std::unordered_map<detail::Sha256, FirstSeen, detail::Sha256Hash> m_first_seen;
  /// Duplicates of first items still in flight, by the first item's index.
  std::unordered_map<std::size_t, std::vector<std::size_t>> m_duplicates_waiting;
  std::deque<std::unique_ptr<Flight>> m_waiting_to_resend;
  std::unique_ptr<Flight> m_held_back;  ///< Taken, but no host could take it yet.
  Clock::time_point m_announced_until{};
  Clock::time_point m_next_slot{};
  std::mt19937_64 m_random{std::random_device{}()};

  // Shared with the loop's callbacks.
  std::mutex m_mutex;
  std::condition_variable m_arrived;
  std::vector<Landed> m_landed;
  bool m_cancel_heard = false;    ///< BatchOptions::cancel was cancelled since the last wake.
  std::size_t m_submitted = 0;    ///< Transfers handed to submit() (the caller's thread only).
  std::size_t m_called_back = 0;  ///< Of those, the ones whose callback has run.
};

}  // namespace

BatchSummary run_batch(const Client& client, const RequestSource& source, const ResultSink& sink,
                       const BatchOptions& options) {
  return BatchRun({client}, source, sink, options).run();
}

BatchSummary run_batch(const std::vector<Client>& hosts, const RequestSource& source,
                       const ResultSink& sink, const BatchOptions& options) {
  if (hosts.empty()) throw std::invalid_argument("run_batch: no host");
  return BatchRun(hosts, source, sink, options).run();
}

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
