// The implementation of clef/batch.hpp, its engine: many decisions with bounded concurrency over
// reused connections (its last stage, delivery, is batch_delivery.cpp; decide_all.cpp the calls
// over it).
#include "clef/batch.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>

#include "engine/batch_delivery.hpp"
#include "engine/batch_flight.hpp"
#include "engine/host_pool.hpp"
#include "engine/retry.hpp"
#include "util/sha256_bytes.hpp"

namespace clef {
namespace {

using Clock = std::chrono::steady_clock;
using detail::Flight;

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
      if (m_in_flight == 0 && m_waiting.empty() && (m_exhausted || m_stopping)) break;
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
      std::unique_ptr<Flight> flight = m_waiting.take(now);
      if (!flight) {
        if (m_exhausted ||
            (m_options.ordered && m_summary.started >= m_delivery.next_to_deliver() + m_window))
          break;
        flight = next_item();
        if (!flight) continue;
        flight->first_sent = now;
      }
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
      if (m_options.max_requests_per_second > 0)
        m_next_slot = std::max(m_next_slot, now) + rate_interval();
      send(std::move(flight), *host);
    }
    return m_stopping || m_in_flight >= m_limit ? Clock::time_point::max() : m_waiting.next_due();
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
      m_delivery.deliver(index, item->error());
      return nullptr;
    }
    auto flight = std::make_unique<Flight>();
    flight->index = index;
    flight->request = std::move(item->value());
    if (m_dedupe) {
      auto body = m_first.request_body(flight->request);
      if (!body) {
        m_delivery.deliver(index, body.error());
        return nullptr;
      }
      flight->key = detail::sha256(body.value());
      if (m_delivery.is_repeat(index, *flight->key)) return nullptr;
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
        m_waiting.add(std::move(landed.flight));
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
    if (!host.overloaded_by(error)) {
      // A lone 429 or 503 among answers: this item alone tries again — when the server said
      // (Retry-After: 0 is at once: should it refuse everything so, its refusals cluster and
      // the backoff below takes over), else after its own backoff; elsewhere at once with
      // several hosts. The host keeps its pace and what it may have in flight.
      const auto wait = error.retry_after ? std::chrono::milliseconds(0) : delay;
      flight.not_before = m_several ? now : now + wait;
      m_waiting.add(std::move(landed.flight));
      return;
    }
    const bool was_paced = host.rate.per_second().has_value();
    if (was_paced && error.http_status == 429 && host.rate.refused(flight.last_sent, now)) {
      flight.not_before = m_several ? now : now + delay;
      m_waiting.add(std::move(landed.flight));
      return;
    }
    const bool at_one = host.limit.allowed() == 1;
    if (error.http_status != 429 || !host.rate.refused(flight.last_sent, now))
      host.limit.refused(flight.last_sent, now, host.in_flight);
    if ((error.retry_after || at_one) && now + delay > host.paused_until) {
      host.paused_until = now + delay;
      announce_pause(now, error);
    }
    m_waiting.add(std::move(landed.flight));
  }

  /// on_pause, when no host may be sent to before a pause ends: until the first one ends.
  void announce_pause(Clock::time_point now, const Error& error) {
    const auto until = m_hosts.all_paused_until(now);
    if (!until || *until <= m_announced_until) return;
    m_announced_until = *until;
    if (m_options.on_pause)
      m_options.on_pause(std::chrono::system_clock::now() + (*until - now), error);
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
    while (std::unique_ptr<Flight> flight = m_waiting.take_any())
      finish(*flight, make_error(ErrorKind::cancelled, "the batch was stopped"));
  }

  void finish(const Flight& flight, Result<Decision>&& result) {
    m_delivery.finish(flight.index, flight.key, std::move(result));
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
  detail::BatchDelivery m_delivery{m_sink, m_options, m_summary};
  detail::WaitingFlights m_waiting;  ///< To send again, and one held back.
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

}  // namespace clef
