#include "clef/batch.hpp"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace clef {
namespace {

using Clock = std::chrono::steady_clock;

bool is_throttle(const Error& error) {
  return error.kind == ErrorKind::rate_limited ||
         (error.kind == ErrorKind::server_error && error.http_status == 503);
}

/// Results of identical bodies, when deduplicating: the first is sent, the rest wait for it.
struct DedupeEntry {
  bool done = false;
  std::optional<Result<Decision>> result;
  std::vector<std::size_t> waiters;
};

class BatchRun {
 public:
  BatchRun(const Client& client, const RequestSource& source, const ResultSink& sink,
           const BatchOptions& options)
      : m_client(client),
        m_source(source),
        m_sink(sink),
        m_options(options),
        m_window(std::max<std::size_t>(options.concurrency, 1) * 8) {}

  BatchSummary run() {
    const std::size_t workers = std::max<std::size_t>(m_options.concurrency, 1);
    std::vector<std::thread> threads;
    threads.reserve(workers);
    for (std::size_t i = 0; i < workers; ++i) threads.emplace_back([this] { work(); });
    for (auto& thread : threads) thread.join();
    return m_summary;
  }

 private:
  bool stop_requested() const { return m_options.stop && m_options.stop->load(); }

  void work() {
    for (;;) {
      std::unique_lock<std::mutex> lock(m_mutex);
      // Ordered output holds finished results back; bound how far ahead workers may run.
      m_changed.wait(lock, [&] {
        return stop_requested() || m_exhausted || !m_options.ordered ||
               m_summary.started < m_next_to_deliver + m_window;
      });
      if (stop_requested()) {
        m_summary.stopped = true;
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
      std::string key;
      if (m_options.dedupe) {
        auto body = m_client.request_body(*request);
        if (!body) {
          deliver_locked(index, body.error());
          continue;
        }
        key = std::move(body).value();
        auto [it, inserted] = m_dedupe.try_emplace(key);
        if (!inserted) {
          ++m_summary.deduplicated;
          if (it->second.done)
            deliver_locked(index, Result<Decision>(*it->second.result));
          else
            it->second.waiters.push_back(index);
          continue;
        }
      }
      lock.unlock();
      Result<Decision> result = send(*request);
      lock.lock();
      if (m_options.dedupe) {
        DedupeEntry& entry = m_dedupe[key];
        entry.done = true;
        entry.result = result;
        for (std::size_t waiter : entry.waiters) deliver_locked(waiter, Result<Decision>(result));
        entry.waiters.clear();
      }
      deliver_locked(index, std::move(result));
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
        until = m_paused_until;
      }
      if (Clock::now() >= until) return true;
      if (stop_requested()) return false;
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(20)));
    }
  }

  Result<Decision> send(const DecisionRequest& request) {
    const auto first = Clock::now();
    for (int pause = 1;; ++pause) {
      if (!wait_for_gate()) return make_error(ErrorKind::cancelled, "the batch was stopped");
      pace();
      Result<Decision> result = m_client.decide(request);
      if (result || !is_throttle(result.error())) return result;
      const auto waited = Clock::now() - first;
      if (waited >= m_options.throttle_budget) return result;
      // The server asked for less traffic: pause every worker, not only this one.
      auto delay = result.error().retry_after.value_or(
          std::chrono::milliseconds(std::min(250LL << std::min(pause, 5), 8'000LL)));
      std::lock_guard<std::mutex> lock(m_mutex);
      ++m_summary.throttled;
      m_paused_until = std::max(m_paused_until, Clock::now() + delay);
    }
  }

  void deliver_locked(std::size_t index, Result<Decision>&& result) {
    if (result)
      ++m_summary.succeeded;
    else
      ++m_summary.failed;
    if (!m_options.ordered) {
      m_sink(index, std::move(result));
      return;
    }
    m_held.emplace(index, std::move(result));
    while (!m_held.empty() && m_held.begin()->first == m_next_to_deliver) {
      m_sink(m_next_to_deliver, std::move(m_held.begin()->second));
      m_held.erase(m_held.begin());
      ++m_next_to_deliver;
    }
    m_changed.notify_all();
  }

  const Client& m_client;
  const RequestSource& m_source;
  const ResultSink& m_sink;
  const BatchOptions& m_options;
  const std::size_t m_window;

  std::mutex m_mutex;
  std::condition_variable m_changed;
  BatchSummary m_summary;
  bool m_exhausted = false;
  std::size_t m_next_to_deliver = 0;
  std::map<std::size_t, Result<Decision>> m_held;
  std::unordered_map<std::string, DedupeEntry> m_dedupe;
  Clock::time_point m_paused_until{};
  Clock::time_point m_next_slot{};
};

}  // namespace

BatchSummary run_batch(const Client& client, const RequestSource& source, const ResultSink& sink,
                       const BatchOptions& options) {
  return BatchRun(client, source, sink, options).run();
}

std::vector<Result<Decision>> decide_all(const Client& client,
                                         const std::vector<DecisionRequest>& requests,
                                         const BatchOptions& options) {
  std::size_t next = 0;
  RequestSource source = [&]() -> std::optional<Result<DecisionRequest>> {
    if (next == requests.size()) return std::nullopt;
    return Result<DecisionRequest>(requests[next++]);
  };
  std::vector<std::optional<Result<Decision>>> slots(requests.size());
  ResultSink sink = [&](std::size_t index, Result<Decision>&& result) {
    slots[index].emplace(std::move(result));
  };
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
