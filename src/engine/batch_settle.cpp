// The implementation of batch_run.hpp's settling: what a result back from the loop means for its
// item (delivered, sent again, moved to another host) and for its host (its pace, its limit, a
// pause, an ejection). Runs under the run's lock, on whichever thread the result came back on.
#include <algorithm>

#include "engine/batch_run.hpp"
#include "engine/retry.hpp"

namespace clef::detail {

/// A result back from the loop: delivered, or queued to be sent again — a 429/503 within the
/// throttle budget, and with several hosts a failure that another host may not have.
void BatchRun::settle(Landed&& landed) {
  --m_in_flight;
  Flight& flight = *landed.flight;
  HostPool::Host& host = m_hosts[flight.host];
  --host.in_flight;
  Result<Decision>& result = landed.result;
  const Clock::time_point now = Clock::now();
  const bool within_budget = !m_stopping && now - flight.first_sent < m_options.throttle_budget;
  const bool refused = !result && is_throttling(result.error());
  host.recent.record(refused);
  if (refused && within_budget) {
    throttled(landed);
    return;
  }
  // Refused as the batch stops: it would have been sent again, so it is not done rather than
  // failed (--resume sends it; a summary does not count the server's 503 against it).
  if (refused && m_stopping && m_options.throttle_budget.count() > 0) {
    count_refusal(host);
    finish(flight,
           make_error(ErrorKind::cancelled, "the batch stopped before this item was sent again (" +
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
  if (!result && result.error().kind == ErrorKind::quota_exhausted) m_tally.quota_exhausted = true;
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
  count_cost(result);
  finish(flight, std::move(result));
}

/// Several hosts: what another host may answer — what a retry may fix, and what only this
/// host got wrong (a 200 that is no answer, the model missing there).
bool BatchRun::another_host_may_answer(const Error& error) {
  return error.retryable() || error.kind == ErrorKind::invalid_response ||
         error.kind == ErrorKind::not_found;
}

/// Several hosts: a connection that failed costs the item nothing once per host (another host
/// will take it); past that, and for any other failure, each try spends one attempt, so an
/// item fails in the end when every host is down, as it would against one.
bool BatchRun::moves_free_or_within_retries(Flight& flight, ErrorKind kind) const {
  if (kind == ErrorKind::connection_failed && ++flight.refused_connections <= m_hosts.size())
    return true;
  return ++flight.attempts < m_first.options().retry.max_attempts;
}

/// Every answer valid: none invalid, of the wrong type or missing. (A refusal is the model's
/// own answer, and abstaining is a policy's.)
bool BatchRun::usable(const Decision& decision) {
  return std::none_of(decision.answers.begin(), decision.answers.end(), [](const Answer& a) {
    return a.status == AnswerStatus::invalid || a.status == AnswerStatus::wrong_type ||
           a.status == AnswerStatus::missing;
  });
}

/// A refusal (429 or 503) that outlasted --throttle-budget: rate_limited, whatever the status
/// (--resume redoes it), saying how long it was refused.
Error BatchRun::out_of_throttle_budget(Error error) const {
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
void BatchRun::throttled(Landed& landed) {
  Flight& flight = *landed.flight;
  HostPool::Host& host = m_hosts[flight.host];
  const Error& error = landed.result.error();
  const Clock::time_point now = Clock::now();
  count_refusal(host);
  const RetryPolicy& policy = m_first.options().retry;
  std::optional<std::chrono::milliseconds> asked = error.retry_after;
  // "Retry-After: 0" from a server that refuses everything would be a tight loop: back off.
  if (asked && asked->count() == 0) asked.reset();
  if (asked) asked = std::min(*asked, policy.max_retry_after);
  // The backoff too is a pause, held to --max-retry-after as the server's own asking is.
  const auto delay =
      std::min(backoff_delay(policy, ++flight.throttled, asked, m_random), policy.max_retry_after);
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

/// A 429/503 counted in the summary, the host's line and, for on_refusal, the caller's outbox.
void BatchRun::count_refusal(HostPool::Host& host) {
  ++m_tally.throttled;
  ++host.summary.refused;
  if (m_options.on_refusal) m_refusals.push_back(host.summary.host);
}

/// on_pause, when no host may be sent to before a pause ends: until the first one ends.
void BatchRun::announce_pause(Clock::time_point now, const Error& error) {
  const auto until = m_hosts.all_paused_until(now);
  if (!until || *until <= m_announced_until) return;
  m_announced_until = *until;
  // Called like the sink: the caller's thread makes the call (BatchRun::deliver).
  if (m_options.on_pause)
    m_pauses.push_back(Pause{std::chrono::system_clock::now() + (*until - now), error});
}

/// BatchOptions::stop_when_unreachable: counts connection failures in a row until a success.
void BatchRun::note_reachability(const Result<Decision>& result) {
  if (!m_options.stop_when_unreachable || m_reached) return;
  if (result) {
    m_reached = true;
    return;
  }
  const ErrorKind kind = result.error().kind;
  if ((kind == ErrorKind::connection_failed || kind == ErrorKind::tls) &&
      ++m_unreachable_in_a_row >= 2 * m_limit) {
    m_tally.unreachable = result.error();
  }
}

/// The client's policy, but 429s and 503s come back here at once: settle() paces or pauses.
/// With several hosts every failure comes back at once: settle() sends it to another host.
RetryPolicy BatchRun::engine_retry(RetryPolicy policy, bool several_hosts) {
  policy.retry_throttling = false;
  if (several_hosts) policy.max_attempts = 1;
  return policy;
}

}  // namespace clef::detail
