#include "clef/batch.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <variant>

#include "digest.hpp"
#include "retry.hpp"

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

class BatchRun {
 public:
  BatchRun(const Client& client, const RequestSource& source, const ResultSink& sink,
           const BatchOptions& options)
      : m_client(client),
        m_source(source),
        m_sink(sink),
        m_options(options),
        m_dedupe(options.dedupe && options.on_duplicate),
        m_window(std::max<std::size_t>(options.concurrency, 1) * 8),
        m_retry(without_throttling(client.options().retry)) {}

  BatchSummary run() {
    const std::size_t workers = std::max<std::size_t>(m_options.concurrency, 1);
    std::vector<std::thread> threads;
    threads.reserve(workers);
    for (std::size_t i = 0; i < workers; ++i) threads.emplace_back([this] { work(); });
    for (auto& thread : threads) thread.join();
    return m_summary;
  }

 private:
  /// Called with m_mutex held.
  bool stop_requested() const {
    return m_summary.quota_exhausted || (m_options.should_stop && m_options.should_stop());
  }

  void work() {
    for (;;) {
      std::unique_lock<std::mutex> lock(m_mutex);
      // Ordered output holds finished results back; bound how far ahead workers may run.
      m_changed.wait(lock, [&] {
        return stop_requested() || m_exhausted || !m_options.ordered ||
               m_summary.started < m_next_to_deliver + m_window;
      });
      if (stop_requested()) {
        m_summary.stopped = !m_summary.quota_exhausted;
        return;
      }
      if (m_exhausted) return;
      std::optional<Result<DecisionRequest>> item = m_source();
      if (!item) {
        m_exhausted = true;
        m_changed.notify_all();
        return;
      }
      const std::size_t index = m_summary.started++;
      if (!*item) {
        deliver_locked(index, item->error());
        continue;
      }
      const DecisionRequest* request = &item->value();
      std::optional<detail::Sha256> key;
      if (m_dedupe) {
        auto body = m_client.request_body(*request);
        if (!body) {
          deliver_locked(index, body.error());
          continue;
        }
        key = detail::sha256(body.value());
        auto [it, inserted] = m_first_seen.try_emplace(*key, FirstSeen{index, false});
        if (!inserted) {
          ++m_summary.deduplicated;
          if (it->second.delivered)
            deliver_locked(index, it->second.index);
          else
            m_waiting[it->second.index].push_back(index);
          continue;
        }
      }
      lock.unlock();
      Result<Decision> result = send(*request);
      lock.lock();
      if (!result && result.error().kind == ErrorKind::quota_exhausted) {
        m_summary.quota_exhausted = true;
        m_changed.notify_all();
      }
      deliver_locked(index, std::move(result));
      if (key) {
        m_first_seen[*key].delivered = true;
        if (auto waiting = m_waiting.find(index); waiting != m_waiting.end()) {
          const std::vector<std::size_t> duplicates = std::move(waiting->second);
          m_waiting.erase(waiting);
          for (std::size_t duplicate : duplicates) deliver_locked(duplicate, index);
        }
      }
    }
  }

  void pace() {
    if (m_options.max_requests_per_second <= 0) return;
    const auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / m_options.max_requests_per_second));
    Clock::time_point slot;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      const auto now = Clock::now();
      m_next_slot = std::max(m_next_slot, now);
      slot = m_next_slot;
      m_next_slot += interval;
    }
    std::this_thread::sleep_until(slot);
  }

  /// Waits out a pause another worker's 429/503 started; false when stopped meanwhile.
  bool wait_for_gate() {
    for (;;) {
      Clock::time_point until;
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (stop_requested()) return false;
        until = m_paused_until;
      }
      if (Clock::now() >= until) return true;
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(20)));
    }
  }

  Result<Decision> send(const DecisionRequest& request) {
    const auto first = Clock::now();
    const RetryPolicy& policy = m_client.options().retry;
    for (int pause = 1;; ++pause) {
      if (!wait_for_gate()) return make_error(ErrorKind::cancelled, "the batch was stopped");
      pace();
      Result<Decision> result = m_client.decide(request, m_retry);
      if (result || !detail::is_throttling(result.error())) return result;
      if (Clock::now() - first >= m_options.throttle_budget) return result;
      // The server asked for less traffic: pause every worker, not only this one, for as long
      // as it asked but never past the policy's cap.
      std::optional<std::chrono::milliseconds> asked = result.error().retry_after;
      if (asked) asked = std::min(*asked, policy.max_retry_after);
      std::lock_guard<std::mutex> lock(m_mutex);
      const auto delay = detail::backoff_delay(policy, pause, asked, m_random);
      ++m_summary.throttled;
      const auto until = Clock::now() + delay;
      if (until > m_paused_until) {
        m_paused_until = until;
        if (m_options.on_pause) {
          m_options.on_pause(std::chrono::system_clock::now() + delay, result.error());
        }
      }
    }
  }

  void hand_over(std::size_t index, Held&& held) {
    if (auto* first = std::get_if<std::size_t>(&held))
      m_options.on_duplicate(index, *first);
    else
      m_sink(index, std::get<Result<Decision>>(std::move(held)));
  }

  void deliver_locked(std::size_t index, Held&& held) {
    if (const auto* result = std::get_if<Result<Decision>>(&held))
      ++(result->ok() ? m_summary.succeeded : m_summary.failed);
    if (!m_options.ordered) return hand_over(index, std::move(held));
    m_held.emplace(index, std::move(held));
    while (!m_held.empty() && m_held.begin()->first == m_next_to_deliver) {
      hand_over(m_next_to_deliver, std::move(m_held.begin()->second));
      m_held.erase(m_held.begin());
      ++m_next_to_deliver;
    }
    m_changed.notify_all();
  }

  /// The client's policy, but 429s and 503s come back here at once: send() pauses every worker.
  static RetryPolicy without_throttling(RetryPolicy policy) {
    policy.retry_throttling = false;
    return policy;
  }

  const Client& m_client;
  const RequestSource& m_source;
  const ResultSink& m_sink;
  const BatchOptions& m_options;
  const bool m_dedupe;
  const std::size_t m_window;
  const RetryPolicy m_retry;

  std::mutex m_mutex;
  std::condition_variable m_changed;
  BatchSummary m_summary;
  bool m_exhausted = false;
  std::size_t m_next_to_deliver = 0;
  std::map<std::size_t, Held> m_held;
  std::unordered_map<detail::Sha256, FirstSeen, detail::Sha256Hash> m_first_seen;
  /// Duplicates of first items still in flight, by the first item's index.
  std::unordered_map<std::size_t, std::vector<std::size_t>> m_waiting;
  Clock::time_point m_paused_until{};
  Clock::time_point m_next_slot{};
  std::mt19937_64 m_random{std::random_device{}()};
};

}  // namespace

BatchSummary run_batch(const Client& client, const RequestSource& source, const ResultSink& sink,
                       const BatchOptions& options) {
  return BatchRun(client, source, sink, options).run();
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

}  // namespace clef
